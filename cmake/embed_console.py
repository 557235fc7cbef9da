#!/usr/bin/env python3
"""Turns the web console's build output (web/dist) into sources linked into the binary.

    embed_console.py state    --dist DIST --state FILE
    embed_console.py generate --dist DIST --out DIR [--node NODE]

`state` runs on every build and rewrites FILE only when what identifies the dist changed (the
content of .build-stamp, or without one a listing of names, sizes and times, or "absent"), so
`generate` (which depends on FILE) runs once per web build, and a dist that appears or vanishes
after configuration is picked up. `generate` writes DIR/console_assets.S (one .incbin per stored
variant, copied under DIR/files/ so the assembler reads only files this build owns) and
DIR/console_table.cpp (the table of http/console_assets.hpp). A gzip copy (level 9) and a brotli
copy (through node's zlib, when node is given) are kept only when smaller than what they would
replace. Dotfiles and dot-directories are skipped. Python standard library only.
"""

import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys

# Compresses each file named on stdin (a JSON list of [source, destination]) with brotli at its
# best quality, in one node process for the whole list.
NODE_BROTLI = r"""
const fs = require('fs');
const zlib = require('zlib');
const jobs = JSON.parse(fs.readFileSync(0, 'utf8'));
for (const [src, dst] of jobs) {
  const data = fs.readFileSync(src);
  const out = zlib.brotliCompressSync(data, {params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length}});
  fs.writeFileSync(dst, out);
}
"""


def dist_files(dist):
    """Relative POSIX paths of the files to embed, sorted; dotfiles and dot-directories skipped."""
    found = []
    for root, dirs, files in os.walk(dist):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name.startswith("."):
                continue
            full = os.path.join(root, name)
            if not os.path.isfile(full):
                continue
            rel = os.path.relpath(full, dist).replace(os.sep, "/")
            if any(c in rel for c in '"\\\n\r\0'):
                print("embed_console: skipping %r (unusual characters)" % rel, file=sys.stderr)
                continue
            found.append(rel)
    return sorted(found)


def dist_state(dist):
    if not os.path.isfile(os.path.join(dist, "index.html")):
        return "absent\n"
    stamp = os.path.join(dist, ".build-stamp")
    if os.path.isfile(stamp):
        with open(stamp, encoding="utf-8", errors="replace") as f:
            return "stamp " + f.read().strip() + "\n"
    lines = ["listing"]
    for rel in dist_files(dist):
        st = os.stat(os.path.join(dist, rel))
        lines.append("%s %d %d" % (rel, st.st_size, st.st_mtime_ns))
    return "\n".join(lines) + "\n"


def write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def c_string(text):
    out = ['"']
    for b in text.encode("utf-8"):
        ch = chr(b)
        if ch in '"\\?':
            out.append("\\" + ch)
        elif 0x20 <= b < 0x7F:
            out.append(ch)
        else:
            out.append("\\%03o" % b)
    out.append('"')
    return "".join(out)


def generate(dist, out, node):
    files_dir = os.path.join(out, "files")
    shutil.rmtree(files_dir, ignore_errors=True)
    os.makedirs(files_dir)
    rels = dist_files(dist) if os.path.isfile(os.path.join(dist, "index.html")) else []

    entries = []
    brotli_jobs = []
    for i, rel in enumerate(rels):
        with open(os.path.join(dist, rel), "rb") as f:
            data = f.read()
        identity = os.path.join(files_dir, "%d" % i)
        with open(identity, "wb") as f:
            f.write(data)
        entry = {"path": "/" + rel, "etag": hashlib.sha256(data).hexdigest()[:16],
                 "identity": (identity, len(data)), "gzip": None, "br": None}
        packed = gzip.compress(data, compresslevel=9, mtime=0)
        if len(packed) < len(data):
            with open(identity + ".gz", "wb") as f:
                f.write(packed)
            entry["gzip"] = (identity + ".gz", len(packed))
        if node:
            brotli_jobs.append([identity, identity + ".br"])
        entries.append(entry)

    if brotli_jobs:
        try:
            subprocess.run([node, "-e", NODE_BROTLI], input=json.dumps(brotli_jobs).encode(),
                           check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            print("embed_console: no brotli copies (%s)" % e, file=sys.stderr)
    for entry in entries:
        br = entry["identity"][0] + ".br"
        if not os.path.isfile(br):
            continue
        size = os.path.getsize(br)
        # Worth sending only when smaller than the best copy a client could otherwise get.
        best = entry["gzip"][1] if entry["gzip"] else entry["identity"][1]
        if size < best:
            entry["br"] = (br, size)
        else:
            os.remove(br)

    asm = ["# Generated by cmake/embed_console.py from %s; do not edit." % dist,
           '\t.section .rodata.sb_console,"a",@progbits']
    table = ["// Generated by cmake/embed_console.py from %s; do not edit." % dist,
             '#include "http/console_assets.hpp"', "",
             'extern "C" {']
    rows = []
    for i, entry in enumerate(entries):
        cells = []
        for kind in ("identity", "gzip", "br"):
            variant = entry[kind]
            if variant is None:
                cells.append("nullptr, 0")
                continue
            symbol = "sb_console_%d_%s" % (i, kind)
            # The digest in a comment: a changed file changes this text, so it is reassembled.
            asm += ["\t.globl %s" % symbol, "\t.hidden %s" % symbol,
                    "\t.type %s, @object" % symbol, "\t.balign 16",
                    "%s:  # %s %s" % (symbol, entry["path"], entry["etag"]),
                    '\t.incbin "%s"' % os.path.abspath(variant[0]),
                    "\t.size %s, . - %s" % (symbol, symbol)]
            table.append('__attribute__((visibility("hidden"))) extern const unsigned char %s[];' % symbol)
            cells.append("%s, %d" % (symbol, variant[1]))
        rows.append("    {%s, %s, %s}," % (c_string(entry["path"]), c_string(entry["etag"]),
                                             ", ".join(cells)))
    asm.append('\t.section .note.GNU-stack,"",@progbits')
    table.append("}")
    table += ["", "namespace sb::http {", "",
              "std::span<const EmbeddedConsoleFile> EmbeddedConsoleTable() {"]
    if rows:
        table += ["  static constexpr EmbeddedConsoleFile kFiles[] = {"] + rows + ["  };",
                  "  return kFiles;"]
    else:
        table.append("  return {};")
    table += ["}", "", "}  // namespace sb::http", ""]

    # Always rewritten (this runs only when the dist changed): the object files must follow.
    for name, lines in (("console_assets.S", asm), ("console_table.cpp", table)):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    total = sum(e["identity"][1] for e in entries)
    print("embed_console: %d file(s), %d bytes from %s" % (len(entries), total, dist))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=("state", "generate"))
    parser.add_argument("--dist", required=True)
    parser.add_argument("--state")
    parser.add_argument("--out")
    parser.add_argument("--node", default="")
    args = parser.parse_args()
    if args.command == "state":
        write_if_changed(args.state, dist_state(args.dist))
    else:
        generate(args.dist, args.out, args.node)


if __name__ == "__main__":
    main()
