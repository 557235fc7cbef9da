#!/usr/bin/env python3
"""Replaces the section between <!-- NAME --> and <!-- /NAME --> of a Markdown file with stdin
(appending it when absent), so each benchmark rewrites only its own figures.
Usage: write_section.py FILE NAME < section.md"""
import os
import sys

path, name = sys.argv[1], sys.argv[2]
section = sys.stdin.read().rstrip("\n")
text = open(path).read() if os.path.exists(path) else "# Performance\n"
start, end = "<!-- %s -->" % name, "<!-- /%s -->" % name
block = "%s\n%s\n%s" % (start, section, end)
if start in text and end in text:
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    text = head + block + tail
else:
    text = text.rstrip("\n") + "\n\n" + block + "\n"
with open(path, "w") as f:
    f.write(text)
