#!/usr/bin/env python3
"""Builds a LangBot 4.9.5 data directory (data/langbot.db + data/config.yaml) for the import tests.

Written from LangBot 4.9.5's schema facts, not copied from a LangBot installation:
- the tables and columns are those of src/langbot/pkg/entity/persistence/*.py at tag v4.9.5, in
  the DDL SQLAlchemy's create_all emits for SQLite (String(n) -> VARCHAR(n), JSON -> JSON,
  Boolean -> BOOLEAN, DateTime -> DATETIME, server_default=func.now() ->
  DEFAULT (CURRENT_TIMESTAMP)); JSON columns hold JSON text, booleans 0/1;
- `metadata.database_version` is 24 (utils/constants.py `required_database_version`), the value
  persistence/mgr.py writes and migrates up to;
- LangBot keeps API keys in the clear (`lbk_` + token_urlsafe(32), api/http/service/apikey.py)
  and account passwords as argon2-cffi encoded hashes (api/http/service/user.py);
- config.yaml follows templates/config.yaml.

    make_langbot_fixture.py DIR [--variant good|bad-json|old-version|new-version|foreign|
                                 damaged|missing-table|no-db|wal]

prints a JSON summary of what it wrote (uuids, the API key, the account) for the tests.
"""

import argparse
import json
import os
import shutil
import sqlite3
import sys

SCHEMA_VERSION = 24

# SQLAlchemy 2's SQLite DDL for the 4.9.5 entities (the tables the importer reads, and the rest
# so the file looks like a real installation).
DDL = [
    """CREATE TABLE metadata (
\tkey VARCHAR(255) NOT NULL, 
\tvalue VARCHAR(255), 
\tPRIMARY KEY (key)
)""",
    """CREATE TABLE model_providers (
\tuuid VARCHAR(255) NOT NULL, 
\tname VARCHAR(255) NOT NULL, 
\trequester VARCHAR(255) NOT NULL, 
\tbase_url VARCHAR(512) NOT NULL, 
\tapi_keys JSON NOT NULL, 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tPRIMARY KEY (uuid), 
\tUNIQUE (uuid)
)""",
    """CREATE TABLE llm_models (
\tuuid VARCHAR(255) NOT NULL, 
\tname VARCHAR(255) NOT NULL, 
\tprovider_uuid VARCHAR(255) NOT NULL, 
\tabilities JSON NOT NULL, 
\textra_args JSON NOT NULL, 
\tprefered_ranking INTEGER NOT NULL, 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tPRIMARY KEY (uuid), 
\tUNIQUE (uuid)
)""",
    """CREATE TABLE embedding_models (
\tuuid VARCHAR(255) NOT NULL, 
\tname VARCHAR(255) NOT NULL, 
\tprovider_uuid VARCHAR(255) NOT NULL, 
\textra_args JSON NOT NULL, 
\tprefered_ranking INTEGER NOT NULL, 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tPRIMARY KEY (uuid), 
\tUNIQUE (uuid)
)""",
    """CREATE TABLE legacy_pipelines (
\tuuid VARCHAR(255) NOT NULL, 
\tname VARCHAR(255) NOT NULL, 
\tdescription VARCHAR(255) NOT NULL, 
\temoji VARCHAR(10), 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tfor_version VARCHAR(255) NOT NULL, 
\tis_default BOOLEAN NOT NULL, 
\tstages JSON NOT NULL, 
\tconfig JSON NOT NULL, 
\textensions_preferences JSON NOT NULL, 
\tPRIMARY KEY (uuid), 
\tUNIQUE (uuid)
)""",
    """CREATE TABLE pipeline_run_records (
\tuuid VARCHAR(255) NOT NULL, 
\tpipeline_uuid VARCHAR(255) NOT NULL, 
\tstatus VARCHAR(255) NOT NULL, 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tstarted_at DATETIME NOT NULL, 
\tfinished_at DATETIME NOT NULL, 
\tresult JSON NOT NULL, 
\tknowledge_base_uuid VARCHAR(255), 
\tPRIMARY KEY (uuid), 
\tUNIQUE (uuid)
)""",
    """CREATE TABLE bots (
\tuuid VARCHAR(255) NOT NULL, 
\tname VARCHAR(255) NOT NULL, 
\tdescription VARCHAR(255) NOT NULL, 
\tadapter VARCHAR(255) NOT NULL, 
\tadapter_config JSON NOT NULL, 
\tenable BOOLEAN NOT NULL, 
\tuse_pipeline_name VARCHAR(255), 
\tuse_pipeline_uuid VARCHAR(255), 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tPRIMARY KEY (uuid), 
\tUNIQUE (uuid)
)""",
    """CREATE TABLE api_keys (
\tid INTEGER NOT NULL, 
\tname VARCHAR(255) NOT NULL, 
\t"key" VARCHAR(255) NOT NULL, 
\tdescription VARCHAR(512), 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tPRIMARY KEY (id), 
\tUNIQUE ("key")
)""",
    """CREATE TABLE plugin_settings (
\tplugin_author VARCHAR(255) NOT NULL, 
\tplugin_name VARCHAR(255) NOT NULL, 
\tenabled BOOLEAN NOT NULL, 
\tpriority INTEGER NOT NULL, 
\tconfig JSON NOT NULL, 
\tinstall_source VARCHAR(255) NOT NULL, 
\tinstall_info JSON NOT NULL, 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tPRIMARY KEY (plugin_author, plugin_name)
)""",
    """CREATE TABLE mcp_servers (
\tuuid VARCHAR(255) NOT NULL, 
\tname VARCHAR(255) NOT NULL, 
\tenable BOOLEAN NOT NULL, 
\tmode VARCHAR(255) NOT NULL, 
\textra_args JSON NOT NULL, 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tPRIMARY KEY (uuid), 
\tUNIQUE (uuid)
)""",
    """CREATE TABLE knowledge_bases (
\tuuid VARCHAR(255) NOT NULL, 
\tname VARCHAR, 
\tdescription TEXT, 
\temoji VARCHAR(10), 
\tcreated_at DATETIME, 
\tupdated_at DATETIME, 
\tknowledge_engine_plugin_id VARCHAR, 
\tcollection_id VARCHAR, 
\tcreation_settings JSON, 
\tretrieval_settings JSON, 
\tPRIMARY KEY (uuid), 
\tUNIQUE (uuid)
)""",
    "CREATE INDEX ix_knowledge_bases_name ON knowledge_bases (name)",
    """CREATE TABLE knowledge_base_files (
\tuuid VARCHAR(255) NOT NULL, 
\tkb_id VARCHAR(255), 
\tfile_name VARCHAR, 
\textension VARCHAR, 
\tcreated_at DATETIME, 
\tstatus VARCHAR, 
\tPRIMARY KEY (uuid), 
\tUNIQUE (uuid)
)""",
    """CREATE TABLE knowledge_base_chunks (
\tuuid VARCHAR(255) NOT NULL, 
\tfile_id VARCHAR(255), 
\ttext TEXT, 
\tPRIMARY KEY (uuid), 
\tUNIQUE (uuid)
)""",
    """CREATE TABLE users (
\tid INTEGER NOT NULL, 
\tuser VARCHAR(255) NOT NULL, 
\tpassword VARCHAR(255) NOT NULL, 
\taccount_type VARCHAR(32) DEFAULT 'local' NOT NULL, 
\tspace_account_uuid VARCHAR(255), 
\tspace_access_token TEXT, 
\tspace_refresh_token TEXT, 
\tspace_access_token_expires_at DATETIME, 
\tspace_api_key VARCHAR(255), 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tPRIMARY KEY (id)
)""",
    """CREATE TABLE webhooks (
\tid INTEGER NOT NULL, 
\tname VARCHAR(255) NOT NULL, 
\turl VARCHAR(1024) NOT NULL, 
\tdescription VARCHAR(512), 
\tenabled BOOLEAN NOT NULL, 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tPRIMARY KEY (id)
)""",
    """CREATE TABLE binary_storages (
\tunique_key VARCHAR(255) NOT NULL, 
\t"key" VARCHAR(255) NOT NULL, 
\towner_type VARCHAR(255) NOT NULL, 
\towner VARCHAR(255) NOT NULL, 
\tvalue BLOB NOT NULL, 
\tcreated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tupdated_at DATETIME DEFAULT (CURRENT_TIMESTAMP) NOT NULL, 
\tPRIMARY KEY (unique_key)
)""",
]

# The records (fixed uuids, so tests can look them up).
SPACE_PROVIDER = "00000000-0000-0000-0000-000000000000"
OPENAI_PROVIDER = "6a1c5a51-5b7e-4b8e-9d55-0b8f3f1b2c01"
FUTURE_PROVIDER = "6a1c5a51-5b7e-4b8e-9d55-0b8f3f1b2c02"
LLM_MODEL = "7b2d6b62-6c8f-4c9f-8e66-1c9f4f2c3d01"
ORPHAN_MODEL = "7b2d6b62-6c8f-4c9f-8e66-1c9f4f2c3d02"
EMBEDDING_MODEL = "7b2d6b62-6c8f-4c9f-8e66-1c9f4f2c3d03"
DEFAULT_PIPELINE = "8c3e7c73-7d90-4da0-9f77-2da05f3d4e01"
SECOND_PIPELINE = "8c3e7c73-7d90-4da0-9f77-2da05f3d4e02"
TELEGRAM_BOT = "9d4f8d84-8ea1-4eb1-a088-3eb16a4e5f01"
WEBHOOK_BOT = "9d4f8d84-8ea1-4eb1-a088-3eb16a4e5f02"
UNKNOWN_ADAPTER_BOT = "9d4f8d84-8ea1-4eb1-a088-3eb16a4e5f03"
MISSING_PIPELINE_BOT = "9d4f8d84-8ea1-4eb1-a088-3eb16a4e5f04"
MISSING_PIPELINE = "8c3e7c73-7d90-4da0-9f77-2da05f3d4eff"
MCP_HTTP = "ae5a9e95-9fb2-4fc2-b199-4fc27b5f6a01"
MCP_SAME_NAME = "ae5a9e95-9fb2-4fc2-b199-4fc27b5f6a02"  # LangBot does not keep names unique
KNOWLEDGE_BASE = "bf6baf06-a0c3-40d3-a2aa-50d38c6a7b01"
API_KEY = "lbk_" + "Q" * 20 + "fixture-key-0123456789"  # 4 + 43 characters, token_urlsafe(32)
ACCOUNT = "admin@langbot.example"
# The reference Argon2 encoding from the Argon2 specification's README (password "password",
# salt "somesalt", t=2, m=65536, p=4): what argon2-cffi's PasswordHasher.verify accepts.
ACCOUNT_PASSWORD = "password"
ACCOUNT_HASH = "$argon2i$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG"

STAGES = ["GroupRespondRuleCheckStage", "BanSessionCheckStage", "PreContentFilterStage",
          "PreProcessor", "ConversationMessageTruncator", "RequireRateLimitOccupancy",
          "MessageProcessor", "ReleaseRateLimitOccupancy", "PostContentFilterStage",
          "ResponseWrapper", "LongTextProcessStage", "SendResponseBackStage"]


def pipeline_config(model_uuid, prompt):
    return {
        "trigger": {
            "group-respond-rules": {"at": True, "prefix": ["ai"], "regexp": [], "random": 0.0},
            "access-control": {"mode": "blacklist", "blacklist": [], "whitelist": []},
            "ignore-rules": {"prefix": [], "regexp": []},
            "message-aggregation": {"enabled": False, "delay": 1.5},
            "misc": {"combine-quote-message": True},
        },
        "safety": {
            "content-filter": {"scope": "all", "check-sensitive-words": True},
            "rate-limit": {"window-length": 60, "limitation": 60, "strategy": "drop"},
        },
        "ai": {
            "runner": {"runner": "local-agent"},
            "local-agent": {
                "model": {"primary": model_uuid, "fallbacks": []},
                "max-round": 10,
                "prompt": [{"role": "system", "content": prompt}],
                "knowledge-bases": [KNOWLEDGE_BASE],
            },
        },
        "output": {
            "long-text-processing": {"threshold": 1000, "strategy": "forward", "font-path": ""},
            "force-delay": {"min": 0, "max": 0},
            "misc": {"hide-exception": True, "at-sender": True, "quote-origin": False,
                     "track-function-calls": False},
        },
    }


EXTENSIONS = {"enable_all_plugins": True, "enable_all_mcp_servers": True, "plugins": [],
              "mcp_servers": []}

CONFIG_YAML = """admins: []
api:
    port: 5300
    webhook_prefix: 'https://bots.example.org'
    extra_webhook_prefix: ''
command:
    enable: true
    prefix:
    - '!'
    privilege: {}
concurrency:
    pipeline: 20
    session: 1
proxy:
    http: ''
    https: ''
system:
    instance_id: ''
    edition: community
    recovery_key: ''
    allow_modify_login_info: true
    limitation:
        max_bots: -1
        max_pipelines: -1
        max_extensions: -1
    jwt:
        expire: 86400
        secret: 'langbot-jwt-secret'
database:
    use: sqlite
    sqlite:
        path: 'data/langbot.db'
    postgresql:
        host: '127.0.0.1'
        port: 5432
        user: 'postgres'
        password: 'postgres'
        database: 'postgres'
vdb:
    use: chroma
plugin:
    enable: true
    runtime_ws_url: 'ws://langbot_plugin_runtime:5400/control/ws'
    enable_marketplace: true
    display_plugin_debug_url: 'ws://localhost:5401/plugin/debug/ws'
monitoring:
    auto_cleanup:
        enabled: true
        retention_days: 14
        check_interval_hours: 1
space:
    url: 'https://space.langbot.app'
    models_gateway_api_url: 'https://api.langbot.cloud/v1'
    oauth_authorize_url: 'https://space.langbot.app/auth/authorize'
    disable_models_service: false
    disable_telemetry: false
"""

TS = "2025-11-02 10:20:30.123456"


def fill(db, llm_base_url, variant):
    """Inserts the records through db.execute(sql, params) (qmark placeholders)."""
    j = json.dumps
    db.execute("INSERT INTO metadata (key, value) VALUES (?, ?)",
               ("database_version",
                str({"old-version": 23, "new-version": 25}.get(variant, SCHEMA_VERSION))))
    providers = [
        (SPACE_PROVIDER, "LangBot Models", "space-chat-completions",
         "https://api.langbot.cloud/v1", []),
        (OPENAI_PROVIDER, "OpenAI", "openai-chat-completions", llm_base_url,
         ["sk-fixture-provider-key-0001"]),
        (FUTURE_PROVIDER, "Future", "some-future-requester", "https://future.example/v1", []),
    ]
    for uuid, name, requester, base_url, keys in providers:
        db.execute("INSERT INTO model_providers (uuid, name, requester, base_url, api_keys, "
                   "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (uuid, name, requester, base_url, j(keys), TS, TS))
    db.execute("INSERT INTO llm_models (uuid, name, provider_uuid, abilities, extra_args, "
               "prefered_ranking, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (LLM_MODEL, "gpt-4o-mini", OPENAI_PROVIDER, j(["vision", "func_call"]),
                j({"temperature": 0.5}), 2, TS, TS))
    db.execute("INSERT INTO llm_models (uuid, name, provider_uuid, abilities, extra_args, "
               "prefered_ranking) VALUES (?, ?, ?, ?, ?, ?)",
               (ORPHAN_MODEL, "orphan", "deadbeef-0000-4000-8000-000000000000", j([]), j({}), 0))
    db.execute("INSERT INTO embedding_models (uuid, name, provider_uuid, extra_args, "
               "prefered_ranking, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
               (EMBEDDING_MODEL, "text-embedding-3-small", OPENAI_PROVIDER, j({}), 0, TS, TS))
    for uuid, name, default, prompt in [
            (DEFAULT_PIPELINE, "ChatPipeline", True, "You are a helpful assistant."),
            (SECOND_PIPELINE, "Support", False, "You answer support questions.")]:
        db.execute("INSERT INTO legacy_pipelines (uuid, name, description, emoji, created_at, "
                   "updated_at, for_version, is_default, stages, config, extensions_preferences) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (uuid, name, "imported from LangBot", "⚙️", TS, TS, "v4.9.5", default,
                    j(STAGES), j(pipeline_config(LLM_MODEL, prompt)), j(EXTENSIONS)))
    bots = [
        (TELEGRAM_BOT, "TG bot", "telegram",
         j({"token": "123456:fixture-telegram-token", "markdown_card": False,
            "enable-stream-reply": False}), False, SECOND_PIPELINE),
        (WEBHOOK_BOT, "Hook bot", "webhook",
         j({"secret": "fixture-webhook-secret", "callback_url": "http://127.0.0.1:9/cb"}), True,
         None),
        (UNKNOWN_ADAPTER_BOT, "Old QQ", "nakuru", j({}), False, DEFAULT_PIPELINE),
        (MISSING_PIPELINE_BOT, "Lost", "telegram",
         j({"token": "1:x", "enable-stream-reply": False}), False, MISSING_PIPELINE),
    ]
    if variant == "bad-json":
        bots[0] = bots[0][:3] + ('{"token": "123456:fixture-telegram-token",',) + bots[0][4:]
    for uuid, name, adapter, config, enable, pipeline in bots:
        db.execute("INSERT INTO bots (uuid, name, description, adapter, adapter_config, enable, "
                   "use_pipeline_name, use_pipeline_uuid, created_at, updated_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (uuid, name, "", adapter, config, enable, None, pipeline, TS, TS))
    db.execute('INSERT INTO api_keys (name, "key", description, created_at, updated_at) '
               "VALUES (?, ?, ?, ?, ?)", ("ci", API_KEY, "from LangBot", TS, TS))
    db.execute("INSERT INTO plugin_settings (plugin_author, plugin_name, enabled, priority, "
               "config, install_source, install_info) VALUES (?, ?, ?, ?, ?, ?, ?)",
               ("langbot-team", "weather", True, 3, j({"city": "Berlin"}), "marketplace", j({})))
    # Settings for the example plugin of this repository, which the tests can install here.
    db.execute("INSERT INTO plugin_settings (plugin_author, plugin_name, enabled, priority, "
               "config, install_source, install_info) VALUES (?, ?, ?, ?, ?, ?, ?)",
               ("switchboard", "greeter", False, 5, j({"greeting": "Moin", "trigger": "moin"}),
                "marketplace", j({})))
    db.execute("INSERT INTO mcp_servers (uuid, name, enable, mode, extra_args, created_at, "
               "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
               (MCP_HTTP, "docs-search", False, "http",
                j({"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"},
                   "timeout": 10}), TS, TS))
    db.execute("INSERT INTO mcp_servers (uuid, name, enable, mode, extra_args) "
               "VALUES (?, ?, ?, ?, ?)",
               (MCP_SAME_NAME, "docs-search", False, "stdio",
                j({"command": "docs-search", "args": [], "env": {}})))
    db.execute("INSERT INTO knowledge_bases (uuid, name, description, emoji, "
               "knowledge_engine_plugin_id, collection_id, creation_settings, "
               "retrieval_settings) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (KNOWLEDGE_BASE, "Manuals", "", "📚", "langbot-team/rag-engine", KNOWLEDGE_BASE,
                j({"embedding_model_uuid": EMBEDDING_MODEL}), j({"top_k": 5})))
    db.execute("INSERT INTO webhooks (name, url, description, enabled, created_at, updated_at) "
               "VALUES (?, ?, ?, ?, ?, ?)",
               ("audit", "http://127.0.0.1:9/audit", "every message", True, TS, TS))
    db.execute('INSERT INTO users ("user", password, account_type) VALUES (?, ?, ?)',
               (ACCOUNT, ACCOUNT_HASH, "local"))


def postgres_ddl(statement):
    """The same table as SQLAlchemy's PostgreSQL dialect creates it."""
    statement = statement.replace("DATETIME", "TIMESTAMP WITHOUT TIME ZONE")
    statement = statement.replace("BLOB", "BYTEA")
    statement = statement.replace("\tid INTEGER NOT NULL", "\tid SERIAL NOT NULL")
    return statement.replace("\tuser VARCHAR", '\t"user" VARCHAR')


def postgres_literal(value):
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


class PostgresScript:
    """Collects the inserts as SQL text for psql (standard_conforming_strings is on)."""

    def __init__(self):
        self.lines = []

    def execute(self, sql, params=()):
        parts = sql.split("?")
        assert len(parts) == len(params) + 1, sql
        out = parts[0]
        for value, rest in zip(params, parts[1:]):
            out += postgres_literal(value) + rest
        self.lines.append(out + ";")


def damage(path):
    """Overwrites every page after the first with bytes that are no b-tree page."""
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        page = 4096
        for offset in range(page, size, page):
            f.seek(offset)
            f.write(bytes([0x5A]) * min(page, size - offset))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--variant", default="good")
    ap.add_argument("--llm-base-url", default="http://127.0.0.1:9/v1")
    ap.add_argument("--postgres-sql", help="write the database as SQL for PostgreSQL (psql -f) "
                                           "to this file instead of data/langbot.db")
    a = ap.parse_args()
    data = os.path.join(a.dir, "data")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "config.yaml"), "w", encoding="utf-8") as f:
        f.write(CONFIG_YAML)
    db_path = os.path.join(data, "langbot.db")
    if a.postgres_sql:
        script = PostgresScript()
        for statement in DDL:
            script.lines.append(postgres_ddl(statement) + ";")
        fill(script, a.llm_base_url, a.variant)
        with open(a.postgres_sql, "w", encoding="utf-8") as f:
            f.write("\n".join(script.lines) + "\n")
    elif a.variant == "wal":
        # LangBot stopped hard while in WAL mode: every record is still in langbot.db-wal, not
        # yet checkpointed into langbot.db (the files are copied while the connection is open).
        staging = os.path.join(a.dir, "staging")
        os.makedirs(staging, exist_ok=True)
        staged = os.path.join(staging, "langbot.db")
        db = sqlite3.connect(staged)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA wal_autocheckpoint=0")
        for statement in DDL:
            db.execute(statement)
        fill(db, a.llm_base_url, "good")
        db.commit()
        shutil.copyfile(staged, db_path)
        shutil.copyfile(staged + "-wal", db_path + "-wal")
        db.close()
        shutil.rmtree(staging)
    elif a.variant != "no-db":
        db = sqlite3.connect(db_path)
        if a.variant == "foreign":
            db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
            db.execute("INSERT INTO notes (text) VALUES ('not LangBot')")
        else:
            for statement in DDL:
                db.execute(statement)
            fill(db, a.llm_base_url, a.variant)
            if a.variant == "missing-table":
                db.execute("DROP TABLE bots")
        db.commit()
        db.close()
        if a.variant == "damaged":
            damage(db_path)
    json.dump({
        "data_dir": data, "db": db_path, "api_key": API_KEY, "account": ACCOUNT,
        "account_password": ACCOUNT_PASSWORD,
        "providers": {"space": SPACE_PROVIDER, "openai": OPENAI_PROVIDER,
                      "future": FUTURE_PROVIDER},
        "models": {"llm": LLM_MODEL, "orphan": ORPHAN_MODEL, "embedding": EMBEDDING_MODEL},
        "pipelines": {"default": DEFAULT_PIPELINE, "second": SECOND_PIPELINE},
        "bots": {"telegram": TELEGRAM_BOT, "webhook": WEBHOOK_BOT,
                 "unknown_adapter": UNKNOWN_ADAPTER_BOT, "missing_pipeline": MISSING_PIPELINE_BOT},
        "mcp": {"http": MCP_HTTP, "same_name": MCP_SAME_NAME}, "knowledge_base": KNOWLEDGE_BASE,
    }, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
