#!/usr/bin/env python3
"""Fails when the PostgreSQL schema differs from the SQLite schema Switchboard builds.

Compared, table by table: the tables, each column's name, position, type (INTEGER -> bigint,
REAL -> double precision, TEXT -> text, BLOB -> bytea), NOT NULL and default; the primary key,
which integer keys are generated (SQLite's INTEGER PRIMARY KEY -> an identity column), UNIQUE
constraints, foreign keys with their ON DELETE action, which columns CHECK constraints read, and
the named indexes (columns, uniqueness, partial or not).

Ignored on purpose: PostgreSQL's explicit `rowid` columns (SQLite's implicit rowid made visible,
also at the end of an index), and full-text tables (SQLite's FTS virtual tables and their shadow
tables; PostgreSQL's table of the same name need only have the virtual table's columns).

Usage (without --apply-ddl, the database's current schema must hold only Switchboard's tables):
  schema_parity.py --pg URL --sqlite FILE            compare a database file Switchboard made
  schema_parity.py --pg URL --switchboard BIN        let BIN make one (a CLI command in a
                                                     temporary data directory), then compare
  --apply-ddl src/storage/sql/migration_runner.cpp src/storage/postgres/pg_schema.cpp
                                                     compare the migrations written there (the
                                                     runner's file makes schema_migrations)
                                                     instead of what the database holds: every
                                                     R"sql(...)sql" block, in order, runs in a
                                                     new schema inside a transaction that is
                                                     rolled back, so any database will do and
                                                     nothing is left behind
URL is anything psql accepts, e.g. postgresql://postgres@/db?host=/tmp/pg&port=5433.
Python 3 standard library and the psql client only. Exit status: 0 same, 1 different, 2 unusable.
"""

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SQLITE_TYPES = {"INTEGER": "bigint", "REAL": "double precision", "TEXT": "text", "BLOB": "bytea"}
PG_ON_DELETE = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL",
                "d": "SET DEFAULT"}
# Integer keys whose values are always given, never generated, although SQLite makes any
# INTEGER PRIMARY KEY a rowid alias.
NOT_GENERATED = {("schema_migrations", "version")}
PSQL_TIMEOUT = 60


class Unusable(Exception):
    """The inputs cannot be compared (no file, psql failed, ...): exit status 2."""


def empty_table():
    return {"columns": [], "pk": (), "generated": set(), "uniques": set(), "fks": set(),
            "checks": set(), "indexes": {}}


def normalize_default(text):
    """'[]'::text -> '[]', '-1'::integer -> -1, (0) -> 0; None stays None."""
    if text is None:
        return None
    value = text.strip()
    while True:
        stripped = re.sub(r"::[a-z][a-z ]*(\[\])?$", "", value)
        if stripped.startswith("(") and stripped.endswith(")"):
            stripped = stripped[1:-1].strip()
        if stripped == value:
            break
        value = stripped
    if re.fullmatch(r"'-?\d+(\.\d+)?'", value):
        value = value[1:-1]
    return value


def check_expressions(create_sql):
    """The text inside each CHECK (...) of a CREATE TABLE statement."""
    out = []
    for m in re.finditer(r"\bCHECK\s*\(", create_sql, re.IGNORECASE):
        depth, i = 1, m.end()
        quoted = False
        while i < len(create_sql) and depth:
            ch = create_sql[i]
            if ch == "'":
                quoted = not quoted
            elif not quoted and ch == "(":
                depth += 1
            elif not quoted and ch == ")":
                depth -= 1
            i += 1
        out.append(create_sql[m.end():i - 1])
    return out


def columns_read(expression, columns):
    """The table's columns an expression names (string literals left out)."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r"'[^']*'", "", expression)))
    return frozenset(c for c in columns if c in words)


def sqlite_schema(path):
    """{table: description} of a SQLite file, FTS tables left out, plus their column names."""
    if not os.path.isfile(path):
        raise Unusable("no SQLite file at %s" % path)
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        tables, fts = {}, {}
        listed = db.execute("PRAGMA table_list").fetchall()
        shadow = {name for _, name, kind, *_ in listed if kind == "shadow"}
        for schema, name, kind, _, without_rowid, _ in listed:
            if schema != "main" or name.startswith("sqlite_") or name in shadow:
                continue
            if kind == "virtual":
                fts[name] = [r[1] for r in db.execute('PRAGMA table_info("%s")' % name)]
                continue
            sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                             (name,)).fetchone()[0]
            t = empty_table()
            info = db.execute('PRAGMA table_info("%s")' % name).fetchall()
            pk = sorted((r for r in info if r[5] > 0), key=lambda r: r[5])
            t["pk"] = tuple(r[1] for r in pk)
            rowid_alias = (not without_rowid and len(pk) == 1 and pk[0][2].upper() == "INTEGER")
            if rowid_alias and (name, pk[0][1]) not in NOT_GENERATED:
                t["generated"].add(pk[0][1])
            for _, col, decl, notnull, default, in_pk in info:
                # SQLite lets a PRIMARY KEY column hold NULL unless it is the rowid alias, the
                # table is WITHOUT ROWID, or the column says NOT NULL; PostgreSQL never does.
                not_null = bool(notnull) or (in_pk > 0 and (rowid_alias or bool(without_rowid)))
                t["columns"].append((col, SQLITE_TYPES.get(decl.upper(), decl.lower()), not_null,
                                     normalize_default(default)))
            for _, idx, unique, origin, partial in db.execute('PRAGMA index_list("%s")' % name):
                cols = tuple(r[2] if r[2] is not None else "<expr>"
                             for r in db.execute('PRAGMA index_info("%s")' % idx))
                if origin == "u":
                    t["uniques"].add(cols)
                elif origin == "c":
                    t["indexes"][idx] = (cols, bool(unique), bool(partial))
            fks = {}
            for fid, _, ref, frm, to, _, on_delete, _ in db.execute(
                    'PRAGMA foreign_key_list("%s")' % name):
                fks.setdefault(fid, [ref, [], [], on_delete])
                fks[fid][1].append(frm)
                fks[fid][2].append(to)
            for ref, frm, to, on_delete in fks.values():
                if all(c is None for c in to):  # REFERENCES parent: its primary key
                    to = list(db.execute('PRAGMA table_info("%s")' % ref))
                    to = [r[1] for r in sorted((r for r in to if r[5] > 0), key=lambda r: r[5])]
                t["fks"].add((tuple(frm), ref, tuple(to), on_delete.upper()))
            names = [c[0] for c in t["columns"]]
            t["checks"] = {columns_read(e, names) for e in check_expressions(sql)}
            tables[name] = t
        return tables, fts
    finally:
        db.close()


PG_QUERY = r"""
SELECT json_build_object(
 'tables', (SELECT json_agg(c.relname) FROM pg_class c
            WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')),
 'columns', (SELECT json_agg(json_build_object(
      't', table_name, 'c', column_name, 'pos', ordinal_position, 'nullable', is_nullable,
      'type', data_type, 'default', column_default, 'identity', is_identity,
      'identity_generation', identity_generation, 'generated', is_generated)
      ORDER BY table_name, ordinal_position)
    FROM information_schema.columns WHERE table_schema = current_schema()),
 'constraints', (SELECT json_agg(json_build_object(
      't', rel.relname, 'type', con.contype,
      'cols', (SELECT json_agg(a.attname ORDER BY k.ord)
               FROM unnest(con.conkey) WITH ORDINALITY k(num, ord)
               JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num),
      'ref', ref.relname,
      'refcols', (SELECT json_agg(a.attname ORDER BY k.ord)
                  FROM unnest(con.confkey) WITH ORDINALITY k(num, ord)
                  JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num),
      'on_delete', con.confdeltype))
    FROM pg_constraint con JOIN pg_class rel ON rel.oid = con.conrelid
    LEFT JOIN pg_class ref ON ref.oid = con.confrelid
    WHERE rel.relnamespace = current_schema()::regnamespace AND con.contype IN ('p','u','f','c')),
 'indexes', (SELECT json_agg(json_build_object(
      't', t.relname, 'name', i.relname, 'unique', x.indisunique, 'partial', x.indpred IS NOT NULL,
      'cols', (SELECT json_agg(COALESCE(a.attname, '<expr>') ORDER BY k.ord)
               FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(num, ord)
               LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.num
               WHERE k.ord <= x.indnkeyatts)))
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    WHERE t.relnamespace = current_schema()::regnamespace
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c
                      WHERE c.conindid = x.indexrelid AND c.conrelid = x.indrelid
                        AND c.contype IN ('p', 'u', 'x'))))
"""


def psql(url, args, stdin=None):
    try:
        p = subprocess.run(["psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1"] + args,
                           input=stdin, capture_output=True, text=True, timeout=PSQL_TIMEOUT)
    except FileNotFoundError:
        raise Unusable("psql is not installed")
    except subprocess.TimeoutExpired:
        raise Unusable("psql took longer than %d s" % PSQL_TIMEOUT)
    if p.returncode != 0:
        raise Unusable("psql failed: %s" % p.stderr.strip())
    return p.stdout


def pg_schema(url, fts_names, ddl=None):
    """{table: description} of the database at `url` (or of `ddl` run in a scratch schema there);
    tables named in `fts_names` are left out and returned apart as {name: [columns]}."""
    if ddl is None:
        raw = json.loads(psql(url, ["-A", "-t", "-c", PG_QUERY]))
    else:
        script = "\n".join([
            "BEGIN;", "CREATE SCHEMA sb_schema_parity;",
            "SET LOCAL search_path = sb_schema_parity;", "SET LOCAL client_min_messages = warning;",
            ddl, PG_QUERY + ";", "ROLLBACK;", ""])
        raw = json.loads(psql(url, ["-A", "-t", "-f", "-"], stdin=script))
    tables, fts = {}, {}
    for name in raw["tables"] or []:
        if name in fts_names:
            fts[name] = []
        else:
            tables[name] = empty_table()
    for c in raw["columns"] or []:
        if c["t"] in fts:
            fts[c["t"]].append(c["c"])
            continue
        if c["t"] not in tables:
            continue  # a view
        t = tables[c["t"]]
        if c["c"] == "rowid":
            if c["identity"] != "YES" or c["identity_generation"] != "ALWAYS":
                t.setdefault("problems", []).append(
                    "rowid must be BIGINT GENERATED ALWAYS AS IDENTITY")
            continue
        if c["identity"] == "YES":
            t["generated"].add(c["c"])
        if c["generated"] == "ALWAYS":
            t.setdefault("problems", []).append("column %s is a generated column" % c["c"])
        t["columns"].append((c["c"], c["type"], c["nullable"] == "NO",
                             normalize_default(c["default"])))
    for con in raw["constraints"] or []:
        if con["t"] not in tables:
            continue
        t = tables[con["t"]]
        cols = tuple(con["cols"] or ())
        if con["type"] == "p":
            t["pk"] = cols
        elif con["type"] == "u":
            t["uniques"].add(cols)
        elif con["type"] == "f":
            t["fks"].add((cols, con["ref"], tuple(con["refcols"] or ()),
                          PG_ON_DELETE[con["on_delete"]]))
        elif con["type"] == "c":
            t["checks"].add(frozenset(cols))
    for idx in raw["indexes"] or []:
        if idx["t"] not in tables:
            continue
        cols = list(idx["cols"] or ())
        while cols and cols[-1] == "rowid":  # SQLite's indexes end with the rowid implicitly
            cols.pop()
        tables[idx["t"]]["indexes"][idx["name"]] = (tuple(cols), idx["unique"], idx["partial"])
    return tables, fts


def compare(sqlite_tables, pg_tables, sqlite_fts=None, pg_fts=None):
    """Human-readable differences, empty when the schemas agree."""
    out = []
    for name in sorted(set(sqlite_tables) - set(pg_tables)):
        out.append("table %s: only in SQLite" % name)
    for name in sorted(set(pg_tables) - set(sqlite_tables)):
        out.append("table %s: only in PostgreSQL" % name)
    for name in sorted(set(sqlite_tables) & set(pg_tables)):
        s, p = sqlite_tables[name], pg_tables[name]
        for problem in p.get("problems", []):
            out.append("table %s: %s" % (name, problem))
        s_cols = {c[0]: c for c in s["columns"]}
        p_cols = {c[0]: c for c in p["columns"]}
        for col in s_cols.keys() - p_cols.keys():
            out.append("%s.%s: only in SQLite" % (name, col))
        for col in p_cols.keys() - s_cols.keys():
            out.append("%s.%s: only in PostgreSQL" % (name, col))
        common = [c for c in s_cols if c in p_cols]
        if common != [c for c in p_cols if c in s_cols]:
            out.append("table %s: columns in another order: SQLite %s, PostgreSQL %s"
                       % (name, common, [c for c in p_cols if c in s_cols]))
        for col in common:
            for i, what in ((1, "type"), (2, "NOT NULL"), (3, "default")):
                if s_cols[col][i] != p_cols[col][i]:
                    out.append("%s.%s: %s differs: SQLite %r, PostgreSQL %r"
                               % (name, col, what, s_cols[col][i], p_cols[col][i]))
        for key, what in (("pk", "primary key"), ("generated", "generated (identity) columns"),
                          ("uniques", "UNIQUE constraints"), ("fks", "foreign keys"),
                          ("checks", "columns read by CHECK constraints")):
            if s[key] != p[key]:
                out.append("table %s: %s differ: SQLite %s, PostgreSQL %s"
                           % (name, what, sorted(s[key]) if isinstance(s[key], set) else s[key],
                              sorted(p[key]) if isinstance(p[key], set) else p[key]))
        for idx in sorted(set(s["indexes"]) | set(p["indexes"])):
            a, b = s["indexes"].get(idx), p["indexes"].get(idx)
            if a != b:
                out.append("index %s on %s: SQLite %s, PostgreSQL %s"
                           % (idx, name, a or "none", b or "none"))
    for name, columns in sorted((sqlite_fts or {}).items()):
        if name not in (pg_fts or {}):
            out.append("full-text table %s: missing in PostgreSQL" % name)
            continue
        missing = [c for c in columns if c not in pg_fts[name]]
        if missing:
            out.append("full-text table %s: PostgreSQL lacks %s" % (name, missing))
    return out


def ddl_of(cpp_path):
    """Every R"sql(...)sql" block of a C++ file, in order, as one script."""
    try:
        with open(cpp_path, encoding="utf-8") as f:
            blocks = re.findall(r'R"sql\((.*?)\)sql"', f.read(), re.S)
    except OSError as e:
        raise Unusable("cannot read %s: %s" % (cpp_path, e))
    if not blocks:
        raise Unusable("no R\"sql(...)sql\" block in %s" % cpp_path)
    return "".join(b + ";\n" for b in blocks)


def sqlite_from_binary(binary, workdir):
    """Makes a data directory with `binary` (which migrates its database at start) and returns
    the database file."""
    data = os.path.join(workdir, "data")
    try:
        p = subprocess.run([binary, "apikey", "create", "--name", "schema-parity",
                            "--data-dir", data], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unusable("running %s failed: %s" % (binary, e))
    if p.returncode != 0:
        raise Unusable("%s failed: %s" % (binary, p.stderr.strip()))
    return os.path.join(data, "switchboard.db")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pg", required=True, help="PostgreSQL URL (as psql takes it)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--sqlite", help="a SQLite file Switchboard made")
    source.add_argument("--switchboard", help="the switchboard binary, to make one")
    parser.add_argument("--apply-ddl", nargs="+",
                        help="migration_runner.cpp and pg_schema.cpp, whose DDL to compare")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="sb-schema-parity-")
    try:
        path = args.sqlite or sqlite_from_binary(args.switchboard, workdir)
        ddl = "".join(ddl_of(path) for path in args.apply_ddl) if args.apply_ddl else None
        s_tables, s_fts = sqlite_schema(path)
        p_tables, p_fts = pg_schema(args.pg, set(s_fts), ddl)
        differences = compare(s_tables, p_tables, s_fts, p_fts)
    except Unusable as e:
        print("schema_parity: %s" % e, file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for d in differences:
        print(d)
    columns = sum(len(t["columns"]) for t in s_tables.values())
    if differences:
        print("schema_parity: %d difference(s)" % len(differences))
        return 1
    print("schema_parity: %d tables, %d columns, %d indexes: the same (full-text: %s)"
          % (len(s_tables), columns, sum(len(t["indexes"]) for t in s_tables.values()),
             ", ".join(sorted(s_fts)) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
