"""Self-test of schema_parity.py without PostgreSQL: SQLite files made here are read, and the
comparison is fed PostgreSQL-side descriptions shaped as pg_schema() returns them. The reading of
a real PostgreSQL is checked by running the script against one (see its usage)."""

import copy
import os
import sqlite3
import tempfile
import unittest

import schema_parity as sp

DDL = """
CREATE TABLE parents (uuid TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL DEFAULT '[]',
  kind TEXT NOT NULL CHECK (kind IN ('a', 'b')), created_at INTEGER NOT NULL);
CREATE INDEX parents_created ON parents (created_at);
CREATE TABLE children (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  parent TEXT NOT NULL REFERENCES parents ON DELETE CASCADE,
  score REAL, data BLOB, flag INTEGER NOT NULL DEFAULT 0 CHECK (flag IN (0, 1)),
  UNIQUE (parent, score));
CREATE UNIQUE INDEX children_one_flag ON children (flag) WHERE flag = 1;
CREATE TABLE pairs (a TEXT NOT NULL, b INTEGER NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID;
CREATE TABLE loose (k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY NOT NULL, applied_at INTEGER NOT NULL);
CREATE VIRTUAL TABLE search USING fts5(text, owner UNINDEXED);
"""


def pg_side(sqlite_tables):
    """What pg_schema() returns for a faithful PostgreSQL twin of `sqlite_tables`."""
    return copy.deepcopy(sqlite_tables)


class SchemaParityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.dir.name, "t.db")
        db = sqlite3.connect(cls.path)
        db.executescript(DDL)
        db.close()
        cls.tables, cls.fts = sp.sqlite_schema(cls.path)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_reads_sqlite_types_keys_and_constraints(self):
        children = self.tables["children"]
        self.assertEqual(children["columns"], [
            ("id", "bigint", True, None), ("parent", "text", True, None),
            ("score", "double precision", False, None), ("data", "bytea", False, None),
            ("flag", "bigint", True, "0")])
        self.assertEqual(children["pk"], ("id",))
        self.assertEqual(children["generated"], {"id"})
        self.assertEqual(children["uniques"], {("parent", "score")})
        # REFERENCES without columns means the parent's primary key.
        self.assertEqual(children["fks"], {(("parent",), "parents", ("uuid",), "CASCADE")})
        self.assertEqual(children["checks"], {frozenset({"flag"})})
        self.assertEqual(children["indexes"], {"children_one_flag": (("flag",), True, True)})
        self.assertEqual(self.tables["parents"]["columns"][1], ("name", "text", True, "'[]'"))
        self.assertEqual(self.tables["parents"]["checks"], {frozenset({"kind"})})

    def test_primary_key_nullability_follows_sqlite_rules(self):
        self.assertEqual([c[2] for c in self.tables["pairs"]["columns"]], [True, True])
        # A TEXT primary key of a rowid table may hold NULL in SQLite: a real difference.
        self.assertEqual([c[2] for c in self.tables["loose"]["columns"]], [False, False])
        self.assertEqual(self.tables["schema_migrations"]["generated"], set())

    def test_fts_tables_are_set_apart(self):
        self.assertEqual(self.fts, {"search": ["text", "owner"]})
        self.assertFalse([t for t in self.tables if t.startswith("search")])

    def test_identical_schemas_pass(self):
        self.assertEqual(sp.compare(self.tables, pg_side(self.tables), self.fts,
                                    {"search": ["rowid", "text", "owner", "document"]}), [])

    def test_each_kind_of_difference_is_reported(self):
        mutations = {
            "missing table": lambda p: p.pop("pairs"),
            "extra table": lambda p: p.__setitem__("other", sp.empty_table()),
            "missing column": lambda p: p["parents"]["columns"].pop(1),
            "type": lambda p: p["children"]["columns"].__setitem__(
                2, ("score", "real", False, None)),
            "not null": lambda p: p["children"]["columns"].__setitem__(
                2, ("score", "double precision", True, None)),
            "default": lambda p: p["parents"]["columns"].__setitem__(
                1, ("name", "text", True, "'{}'")),
            "order": lambda p: p["parents"]["columns"].reverse(),
            "primary key": lambda p: p["pairs"].__setitem__("pk", ("a",)),
            "identity": lambda p: p["children"]["generated"].clear(),
            "unique": lambda p: p["children"]["uniques"].clear(),
            "on delete": lambda p: p["children"].__setitem__(
                "fks", {(("parent",), "parents", ("uuid",), "RESTRICT")}),
            "check": lambda p: p["parents"]["checks"].clear(),
            "index columns": lambda p: p["parents"]["indexes"].__setitem__(
                "parents_created", (("name",), False, False)),
            "index missing": lambda p: p["children"]["indexes"].clear(),
            "partial": lambda p: p["children"]["indexes"].__setitem__(
                "children_one_flag", (("flag",), True, False)),
            "problem": lambda p: p["loose"].__setitem__("problems", ["rowid must be ..."]),
        }
        for what, mutate in mutations.items():
            with self.subTest(what):
                pg = pg_side(self.tables)
                mutate(pg)
                self.assertEqual(len(sp.compare(self.tables, pg)), 1, what)

    def test_fts_columns_must_exist_in_postgres(self):
        diff = sp.compare(self.tables, pg_side(self.tables), self.fts, {"search": ["text"]})
        self.assertEqual(diff, ["full-text table search: PostgreSQL lacks ['owner']"])
        diff = sp.compare(self.tables, pg_side(self.tables), self.fts, {})
        self.assertEqual(diff, ["full-text table search: missing in PostgreSQL"])

    def test_postgres_defaults_are_normalized(self):
        for raw, want in (("'[]'::text", "'[]'"), ("0", "0"), ("'-1'::integer", "-1"),
                          ("('x'::character varying)::text", "'x'"), (None, None),
                          ("'null'::text", "'null'")):
            self.assertEqual(sp.normalize_default(raw), want, raw)

    def test_ddl_is_every_raw_sql_block_in_order(self):
        cpp = os.path.join(self.dir.name, "schema.cpp")
        with open(cpp, "w") as f:
            f.write('{1, "a", R"sql(\nCREATE TABLE a (x TEXT);\n)sql"},\n'
                    'constexpr auto k = R"sql(CREATE TABLE b (y TEXT))sql";\n')
        self.assertEqual(sp.ddl_of(cpp), "\nCREATE TABLE a (x TEXT);\n;\nCREATE TABLE b (y TEXT);\n")
        with open(cpp, "w") as f:
            f.write("int main() {}\n")
        with self.assertRaises(sp.Unusable):
            sp.ddl_of(cpp)

    def test_missing_sqlite_file_is_unusable(self):
        with self.assertRaises(sp.Unusable):
            sp.sqlite_schema(os.path.join(self.dir.name, "absent.db"))


if __name__ == "__main__":
    unittest.main()
