#!/usr/bin/env python3
"""Fails on any DocC warning or error that .ci/docs-known-issues does not list.

usage: docc-diagnostics.py DIAGNOSTICS.json MODULE

Equivalent to `docc convert --warnings-as-errors`, but for the listed warnings, which come from
doc comments in Sources and have been reported.
"""

import json
import os
import sys
from urllib.parse import unquote, urlparse

root = os.getcwd()
known = set()
with open(".ci/docs-known-issues", encoding="utf-8") as listing:
    for line in listing:
        line = line.strip()
        if line and not line.startswith("#"):
            file, summary = (part.strip() for part in line.split("|", 1))
            known.add((file, summary))

with open(sys.argv[1], encoding="utf-8") as file:
    diagnostics = json.load(file)["diagnostics"]

seen = set()
failures = []
for diagnostic in diagnostics:
    if diagnostic["severity"] not in ("warning", "error"):
        continue
    source = diagnostic.get("source") or ""
    path = os.path.relpath(unquote(urlparse(source).path), root) if source else "?"
    line = diagnostic.get("range", {}).get("start", {}).get("line", "?")
    entry = (path, diagnostic["summary"])
    if entry in known:
        seen.add(entry)
        print(f"  known issue, reported: {path}:{line}: {diagnostic['summary']}")
    else:
        failures.append(f"{path}:{line}: {diagnostic['severity']}: {diagnostic['summary']}")

for file, summary in sorted(known - seen):
    if not file.startswith(f"Sources/{sys.argv[2]}/"):
        continue
    print(f"  note: no longer occurs, remove it from .ci/docs-known-issues: {file} | {summary}")
for failure in failures:
    print(failure, file=sys.stderr)
sys.exit(1 if failures else 0)
