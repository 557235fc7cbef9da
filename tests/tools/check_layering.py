#!/usr/bin/env python3
"""Fails when a file under src/ includes a header of a layer its own layer may not use.

The allowed arrows are the table of docs/architecture.md, kept in tests/layering.txt: one line per
layer, `layer: allowed layers...`. A layer is the first folder under src/ (http/api belongs to
http, storage/sqlite to storage, platforms/telegram to platforms). A layer may always include its
own headers. Run: python3 tests/tools/check_layering.py <repo root>
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def load_rules(path):
    rules = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                sys.exit("%s:%d: expected 'layer: allowed...'" % (path, number))
            layer, allowed = line.split(":", 1)
            rules[layer.strip()] = set(allowed.split())
    return rules


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    rules = load_rules(os.path.join(root, "tests", "layering.txt"))
    src = os.path.join(root, "src")
    problems = []
    checked = 0
    for folder, _, files in os.walk(src):
        for name in files:
            if not name.endswith((".cpp", ".hpp")):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, src)
            if os.sep not in rel:
                continue  # main.cpp: the executable, allowed everything through app
            layer = rel.split(os.sep, 1)[0]
            if layer not in rules:
                problems.append("%s: layer '%s' is missing from tests/layering.txt" % (rel, layer))
                continue
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or "/" not in m.group(1):
                        continue
                    target = m.group(1).split("/", 1)[0]
                    if not os.path.isdir(os.path.join(src, target)):
                        continue  # not one of ours
                    checked += 1
                    if target != layer and target not in rules[layer]:
                        problems.append("src/%s:%d: %s may not include %s (allowed: %s)" % (
                            rel, number, layer, m.group(1), ", ".join(sorted(rules[layer])) or
                            "nothing"))
    for p in problems:
        print(p)
    print("%d includes checked, %d forbidden" % (checked, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
