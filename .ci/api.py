#!/usr/bin/env python3
"""Renders the public API of one module, from its symbol graphs, as a sorted text listing.

usage: api.py MODULE SYMBOL_GRAPH_DIR > api/MODULE.txt

SYMBOL_GRAPH_DIR holds what `swift-symbolgraph-extract -minimum-access-level public
-skip-synthesized-members` wrote for MODULE: `MODULE.symbols.json`, and one
`MODULE@OTHER.symbols.json` per module whose types MODULE extends. Each public declaration
becomes one line, indented under the type that holds it; a type's conformances and superclass
follow its own line. Lines are sorted, and nothing in them depends on where the package was
built (no paths, no compiler-made identifiers), so the listing changes only when the API does.
"""

import json
import os
import sys

# The order of members within a type: how a reader looks a type up.
KIND_ORDER = [
    "swift.associatedtype",
    "swift.typealias",
    "swift.enum.case",
    "swift.init",
    "swift.deinit",
    "swift.type.property",
    "swift.property",
    "swift.type.subscript",
    "swift.subscript",
    "swift.type.method",
    "swift.method",
    "swift.func.op",
    "swift.protocol",
    "swift.class",
    "swift.struct",
    "swift.enum",
    "swift.func",
    "swift.var",
]
# Conformances that every type has unless it opts out, listed or not depending on the compiler.
IMPLIED = {"Swift.Copyable", "Swift.Escapable", "Swift.SendableMetatype"}
TYPE_KINDS = {"swift.protocol", "swift.class", "swift.struct", "swift.enum"}


def declaration(symbol):
    return "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))


def constraints(items):
    """The constraints of `items` as text, without those every generic parameter has implicitly."""
    return [constraint_text(c) for c in items or [] if c["rhs"].removeprefix("Swift.") not in ("Copyable", "Escapable")]


def constraint_text(constraint):
    operator = {"conformance": ":", "superclass": ":", "sameType": "=="}.get(constraint["kind"], constraint["kind"])
    return f"{constraint['lhs']} {operator} {constraint['rhs']}"


def availability(symbol):
    parts = []
    for item in symbol.get("availability") or []:
        domain = item.get("domain", "*")
        words = []
        for key in ("introduced", "deprecated", "obsoleted"):
            if key in item:
                version = ".".join(str(item[key][part]) for part in ("major", "minor", "patch") if part in item[key])
                words.append(f"{key} {version}")
        if item.get("isUnconditionallyDeprecated"):
            words.append("deprecated")
        if item.get("isUnconditionallyUnavailable"):
            words.append("unavailable")
        if item.get("renamed"):
            words.append(f"renamed: {item['renamed']}")
        parts.append(f"{domain} {', '.join(words)}".strip())
    return f"@available({'; '.join(sorted(parts))}) " if parts else ""


class Node:
    def __init__(self, name):
        self.name = name
        self.lines = []  # (sort key, text) of the symbols at this path
        self.notes = set()  # conformances and superclass of the type at this path
        self.children = {}

    def child(self, name):
        return self.children.setdefault(name, Node(name))


def load(directory, module):
    """The symbols and relationships of every symbol graph of `module`, and which file each came from."""
    graphs = []
    for file in sorted(os.listdir(directory)):
        if file == f"{module}.symbols.json" or (file.startswith(f"{module}@") and file.endswith(".symbols.json")):
            with open(os.path.join(directory, file), encoding="utf-8") as handle:
                extended = file[len(module) + 1 : -len(".symbols.json")] if "@" in file else None
                graphs.append((extended, json.load(handle)))
    if not graphs:
        sys.exit(f"api.py: no symbol graph of {module} in {directory}")
    return graphs


def render(module, directory):
    root = Node(module)
    symbols = {}
    relationships = []
    for extended, graph in load(directory, module):
        for symbol in graph["symbols"]:
            symbols[symbol["identifier"]["precise"]] = (extended, symbol)
        relationships += graph["relationships"]

    defaults = {r["source"] for r in relationships if r["kind"] == "defaultImplementationOf"}
    optional = {r["source"] for r in relationships if r["kind"] == "optionalRequirementOf"}
    member_of = {r["source"]: r["target"] for r in relationships if r["kind"] == "memberOf"}

    def node_at(extended, path):
        node = root
        for index, name in enumerate(path):
            # A type of another module that this one extends reads "extension OtherModule.Type".
            label = f"extension {extended}.{name}" if extended and index == 0 else name
            node = node.child(label)
        return node

    for precise, (extended, symbol) in symbols.items():
        kind = symbol["kind"]["identifier"]
        path = symbol["pathComponents"]
        text = availability(symbol) + declaration(symbol)
        if symbol.get("accessLevel") == "open":
            text = "open " + text  # the declaration leaves it out; a subclass may depend on it
        parent = symbols.get(member_of.get(precise, ""))
        # Constraints of the extension that declares a member, beyond those of its type.
        outer = set()
        if parent:
            outer = set(constraints((parent[1].get("swiftGenerics") or {}).get("constraints")))
        extra = constraints((symbol.get("swiftExtension") or {}).get("constraints"))
        extra = [c for c in extra if c not in outer and c not in text]
        if extra:
            text += f"  [in extension where {', '.join(sorted(set(extra)))}]"
        if precise in defaults:
            text += "  [default implementation]"
        if precise in optional:
            text += "  [optional requirement]"
        node = node_at(extended, path)
        order = KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
        node.lines.append(((order, path[-1], text), text))

    for relationship in relationships:
        if relationship["kind"] not in ("conformsTo", "inheritsFrom"):
            continue
        source = symbols.get(relationship["source"])
        if source is None or source[1]["kind"]["identifier"] not in TYPE_KINDS | {"swift.typealias"}:
            continue
        if relationship["target"] in symbols:  # a type of this module
            target = ".".join(symbols[relationship["target"]][1]["pathComponents"])
        else:  # a type of another module, named with its module
            target = relationship.get("targetFallback") or relationship["target"]
        if target in IMPLIED:
            continue
        word = "conforms to" if relationship["kind"] == "conformsTo" else "inherits from"
        # A conditional conformance names what it needs beyond the type's own generic constraints.
        generics = set(constraints((source[1].get("swiftGenerics") or {}).get("constraints")))
        conditions = constraints(relationship.get("swiftConstraints"))
        conditions = [c for c in conditions if c not in generics]
        note = f"{word} {target}" + (f" where {', '.join(conditions)}" if conditions else "")
        node_at(source[0], source[1]["pathComponents"]).notes.add(note)

    out = []

    def walk(node, depth):
        # A node's own lines (one per overload) come first, then its notes, then its members.
        for _, text in sorted(node.lines):
            out.append("  " * depth + text)
        if not node.lines:
            out.append("  " * depth + node.name)
        for note in sorted(node.notes):
            out.append("  " * (depth + 1) + f"- {note}")

        def key(child):
            first = min(child.lines)[0] if child.lines else (len(KIND_ORDER), child.name, child.name)
            return first

        for child in sorted(node.children.values(), key=key):
            walk(child, depth + 1)

    for child in sorted(root.children.values(), key=lambda c: (c.name.startswith("extension "), c.name)):
        walk(child, 0)
        out.append("")
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    module, directory = sys.argv[1], sys.argv[2]
    header = [
        f"// The public API of {module}, as the Swift compiler sees it on Linux.",
        "// Generated from the symbol graph by `bash .ci/api update`: do not edit by hand.",
        "// A change here is a change of the public API: CHANGELOG.md says what changed, and",
        "// whether the version's major number (or, before 1.0, its minor number) must go up.",
        "",
    ]
    lines = header + render(module, directory)
    sys.stdout.write("\n".join(lines).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
