#!/usr/bin/env python3
"""Fails when DocC placed a top-level symbol of a module by itself.

usage: curation.py ARCHIVE MODULE

DocC marks the topic groups it makes for uncurated symbols as generated; a module's landing
page should have none: every type, protocol and function belongs in a group of its own.
"""

import json
import os
import sys

archive, module = sys.argv[1], sys.argv[2]
page = os.path.join(archive, "data", "documentation", module.lower() + ".json")
with open(page, encoding="utf-8") as file:
    node = json.load(file)
uncurated = [
    (section.get("title"), identifier)
    for section in node.get("topicSections", [])
    if section.get("generated")
    for identifier in section["identifiers"]
]
for title, identifier in uncurated:
    print(f"docs: {identifier} is in no topic group of {module}.md (DocC put it under '{title}')", file=sys.stderr)
if uncurated:
    sys.exit(1)
print(f"  {module}: every top-level symbol is in a topic group")
