#!/usr/bin/env python3
"""Type-checks the Swift code blocks of Markdown files against the built modules.

usage: snippets.py MODULES_DIR FILE.md...

The blocks of one file are joined, in order, into one `main.swift` (after a line of imports),
and type-checked in Swift 6 mode with warnings as errors, so later blocks may use what earlier
blocks declare. An HTML comment on the line before a block changes how it is treated:

    <!-- snippet: skip -->            not compiled (Package.swift, fragments)
    <!-- snippet: scope -->           wrapped in `do { }`, so its local names stay local
    <!-- snippet: needs NAME -->      compiled only once `NAME` is declared in Sources/
    <!-- snippet: file PATH -->       compiled, and must equal the file at PATH

Anywhere in a file, `<!-- snippet: include PATH -->` puts the Swift file at PATH before its
blocks: declarations an article uses without showing them.

Anywhere in a file, `<!-- snippet: tests-of DIR -->` makes its blocks a test file of the
executable whose sources are in DIR, as a test target holds it: the sources are built into a
module named after DIR's last component, with testing enabled, and the blocks go into a file of
their own, after the imports and `@testable import` of that module, type-checked as a library
file (declarations only). So an article's tests compile against that program unchanged.
"""

import os
import re
import subprocess
import sys
import tempfile

IMPORTS = "import Dispatch\nimport FluxCore\nimport FluxReactive\nimport FluxTesting\nimport Foundation\nimport Observation\n"
INCLUDE = re.compile(r"<!--\s*snippet:\s*include\s+(?P<path>\S+)\s*-->")
TESTS_OF = re.compile(r"<!--\s*snippet:\s*tests-of\s+(?P<path>\S+)\s*-->")
BLOCK = re.compile(r"(?:<!--\s*snippet:\s*(?P<directive>[^>]*?)\s*-->\s*\n)?```swift\n(?P<code>.*?)^```", re.S | re.M)


def declared(name):
    pattern = re.compile(r"\b(var|func|let)\s+" + re.escape(name) + r"\b")
    for root, _, files in os.walk("Sources"):
        for file in files:
            if file.endswith(".swift"):
                with open(os.path.join(root, file), encoding="utf-8") as source:
                    if pattern.search(source.read()):
                        return True
    return False


def program(path, failures):
    """The Swift file made of the blocks of `path`, the (start, markdown, line) of each block in
    it, and the folder of the executable it tests (`tests-of`), or None."""
    with open(path, encoding="utf-8") as markdown:
        text = markdown.read()
    tests_of = TESTS_OF.search(text)
    tested = tests_of.group("path").rstrip("/") if tests_of else None
    parts = [IMPORTS]
    if tested:
        parts.append(f"@testable import {os.path.basename(tested)}\n")
    for include in INCLUDE.finditer(text):
        with open(include.group("path"), encoding="utf-8") as support:
            parts.append(support.read())
    lines = []  # (line in main.swift) -> (markdown line), for error messages
    for match in BLOCK.finditer(text):
        directive = (match.group("directive") or "").split(None, 1)
        code = match.group("code")
        line = text.count("\n", 0, match.start("code")) + 1
        kind = directive[0] if directive else ""
        if kind == "skip":
            continue
        if kind == "needs" and not declared(directive[1]):
            print(f"  {path}:{line}: skipped until `{directive[1]}` exists")
            continue
        if kind == "file":
            with open(directive[1], encoding="utf-8") as example:
                if example.read() != code:
                    failures.append(f"{path}:{line}: the block differs from {directive[1]}")
        if kind == "scope":
            code = "do {\n" + "".join("  " + row if row.strip() else row for row in code.splitlines(True)) + "}\n"
            line -= 1
        start = sum(part.count("\n") for part in parts) + 1
        lines.append((start, path, line))
        parts.append(code)
    return "".join(parts), lines, tested


def build_tested(folder, modules, directory):
    """Builds the sources of the executable in `folder` into a module in `directory`, with
    testing enabled, as `swift build` builds a target that tests import; its errors, or None."""
    name = os.path.basename(folder)
    sources = sorted(os.path.join(folder, file) for file in os.listdir(folder) if file.endswith(".swift"))
    # In the package, as SwiftPM builds it: its `package` declarations are the executable's to use.
    package = re.sub(r"[^a-z0-9_]", "_", os.path.basename(os.getcwd()).lower())
    result = subprocess.run(
        ["swiftc", "-emit-module", "-module-name", name, "-package-name", package, "-enable-testing",
         "-swift-version", "6", "-warnings-as-errors", "-I", modules,
         "-emit-module-path", os.path.join(directory, name + ".swiftmodule")]
        + sources,
        capture_output=True,
        text=True,
    )
    return None if result.returncode == 0 else result.stdout + result.stderr


def main():
    modules, files = sys.argv[1], sys.argv[2:]
    failures = []
    for path in files:
        source, lines, tested = program(path, failures)
        if len(lines) == 0:
            continue
        with tempfile.TemporaryDirectory() as directory:
            # A program's code is its `main.swift`; a test file is a library file, beside the
            # module it tests.
            name = "Tests.swift" if tested else "main.swift"
            swift_file = os.path.join(directory, name)
            with open(swift_file, "w", encoding="utf-8") as out:
                out.write(source)
            command = ["swiftc", "-typecheck", "-swift-version", "6", "-warnings-as-errors"]
            if tested:
                errors = build_tested(tested, modules, directory)
                if errors is not None:
                    failures.append(f"{path}: {tested}, which its tests import, does not compile:\n{errors}")
                    continue
                # Before the built modules, which hold the executable's module as `swift build`
                # last built it.
                command += ["-I", directory, "-parse-as-library"]
            command += ["-I", modules]
            result = subprocess.run(command + [swift_file], capture_output=True, text=True)
        if result.returncode != 0:
            def where(match):
                number = int(match.group(1))
                start, markdown, line = max((entry for entry in lines if entry[0] <= number), default=lines[0])
                return f"{markdown}:{line + number - start}:"

            message = re.sub(r"\S*" + re.escape(name) + r":(\d+):", where, result.stdout + result.stderr)
            failures.append(f"{path}: its Swift code does not compile:\n{message}")
        else:
            against = f", as tests of {tested}" if tested else ""
            print(f"  {path}: {len(lines)} code blocks compile{against}")
    for failure in failures:
        print(failure, file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
