#!/usr/bin/env python3
"""Keeps docs/api.md's list of the routes LangBot 4.9.5's console calls honest.

Each row of the section "LangBot 4.9.5's console" is `| ✓ | `METHOD /path` | note |` for a route
Switchboard serves, or `| ✗ | `METHOD /path` | why not |` for one it does not. A ticked route must
be in tests/route_auth_table.txt (the router's own list, checked against the binary by the http
unit test); a crossed one must say why. Parameter names do not matter: {id} matches {webhook_id}.
Run: python3 tests/tools/check_console_routes.py <repo root>
"""

import re
import sys

SECTION = "## LangBot 4.9.5's console"
ROW = re.compile(r"^\|\s*(✓|✗)\s*\|\s*`([A-Z]+) (/[^`]*)`\s*\|(.*)\|\s*$")


def normalise(path):
    if not path.startswith("/api/v1/") and not path.startswith("/bots/"):
        path = "/api/v1" + path
    return re.sub(r"\{[^}]*\}", "{}", path.split("?")[0])


def routes_of_table(path):
    routes = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if len(line) >= 2:
                routes.add((line[0], normalise(line[1])))
    return routes


def rows_of_doc(path):
    rows, inside = [], False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("## "):
                inside = line.startswith(SECTION)
                continue
            if inside and line.startswith("|"):
                match = ROW.match(line.strip())
                if match:
                    rows.append((number, match.group(1), match.group(2), match.group(3),
                                 match.group(4).strip()))
    return rows


def check(root):
    served = routes_of_table(root + "/tests/route_auth_table.txt")
    rows = rows_of_doc(root + "/docs/api.md")
    problems = []
    if len(rows) < 100:
        problems.append("docs/api.md: expected the whole list under %r, found %d rows"
                        % (SECTION, len(rows)))
    seen = set()
    for number, mark, method, path, note in rows:
        key = (method, normalise(path))
        if key in seen:
            problems.append("docs/api.md:%d: %s %s is listed twice" % (number, method, path))
        seen.add(key)
        if mark == "✓" and key not in served:
            problems.append("docs/api.md:%d: %s %s is ticked but no route serves it"
                            % (number, method, path))
        if mark == "✗" and len(note) < 10:
            problems.append("docs/api.md:%d: %s %s is not served: say why" % (number, method, path))
        if mark == "✗" and key in served:
            problems.append("docs/api.md:%d: %s %s is served: tick it" % (number, method, path))
    return problems


def main(argv):
    problems = check(argv[1] if len(argv) > 1 else ".")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
