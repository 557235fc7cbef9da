#include "storage/postgres/pg_schema.hpp"

namespace sb::storage::postgres {

namespace {

// Mapping from the SQLite schema: INTEGER -> BIGINT, REAL -> DOUBLE PRECISION, BLOB -> BYTEA,
// booleans stay BIGINT 0/1 (the repositories bind integers), INTEGER PRIMARY KEY -> an identity
// key. Columns keep SQLite's order (ALTERed ones last), so a row reads the same on both.
//
// Tables the repositories list by "created_at, rowid" have no integer key in SQLite and rely on
// its implicit rowid; here they get an explicit `rowid` identity column (last), and their
// created_at indexes end with it, as SQLite's do implicitly.
//
// Text the repositories sort by (plugins' author and name) is COLLATE "C": byte order, as
// SQLite's BINARY, whatever the database's locale.
//
// Keyword search: SQLite's FTS5 table knowledge_fts becomes a plain table of the same name whose
// `rowid` is the chunk id, so the repository's inserts and deletes are the same SQL on both; a
// generated tsvector (the 'simple' configuration: lower case, no stemming, no stop words, as the
// texts are in any language) with a GIN index answers the query. The stored text has CJK
// characters spaced apart already (knowledge/retrieval_scoring.hpp), so no extension (pg_trgm,
// zhparser) is needed and any managed PostgreSQL will do. ASCII punctuation is turned into spaces
// first, because PostgreSQL's parser would otherwise keep "example.com", "3.14" or "/usr/lib" as
// one token where FTS5's unicode61 tokenizer, which the queries are written for, splits them.
// Lower-casing follows the database's LC_CTYPE: it must be a UTF-8 locale (C.UTF-8, en_US.UTF-8),
// as under "C" only ASCII letters are folded and "Äpfel" would not match "äpfel".
constexpr PgMigration kMigrations[] = {
    {10, "baseline (SQLite migrations 1-10)", R"sql(
CREATE TABLE providers (
  uuid        TEXT PRIMARY KEY NOT NULL,
  name        TEXT NOT NULL,
  requester   TEXT NOT NULL,
  base_url    TEXT NOT NULL,
  api_keys    TEXT NOT NULL DEFAULT '[]',
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  rowid       BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX providers_created ON providers (created_at, rowid);

CREATE TABLE models (
  uuid              TEXT PRIMARY KEY NOT NULL,
  kind              TEXT NOT NULL CHECK (kind IN ('llm', 'embedding')),
  name              TEXT NOT NULL,
  description       TEXT NOT NULL DEFAULT '',
  provider_uuid     TEXT NOT NULL REFERENCES providers (uuid) ON DELETE RESTRICT,
  requester_config  TEXT NOT NULL DEFAULT '{}',
  abilities         TEXT NOT NULL DEFAULT '[]',
  extra_args        TEXT NOT NULL DEFAULT '{}',
  prefered_ranking  BIGINT NOT NULL DEFAULT 0,
  dimensions        BIGINT,
  created_at        BIGINT NOT NULL,
  updated_at        BIGINT NOT NULL,
  rowid             BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX models_kind_created ON models (kind, created_at, rowid);
CREATE INDEX models_provider ON models (provider_uuid, kind);

CREATE TABLE pipelines (
  uuid                    TEXT PRIMARY KEY NOT NULL,
  name                    TEXT NOT NULL,
  description             TEXT NOT NULL DEFAULT '',
  emoji                   TEXT NOT NULL DEFAULT '',
  config                  TEXT NOT NULL DEFAULT '{}',
  stages                  TEXT NOT NULL DEFAULT '[]',
  is_default              BIGINT NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
  for_version             TEXT NOT NULL DEFAULT '',
  extensions_preferences  TEXT NOT NULL DEFAULT '{}',
  created_at              BIGINT NOT NULL,
  updated_at              BIGINT NOT NULL,
  rowid                   BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX pipelines_created ON pipelines (created_at, rowid);
CREATE UNIQUE INDEX pipelines_one_default ON pipelines (is_default) WHERE is_default = 1;

CREATE TABLE bots (
  uuid               TEXT PRIMARY KEY NOT NULL,
  name               TEXT NOT NULL,
  description        TEXT NOT NULL DEFAULT '',
  adapter            TEXT NOT NULL,
  adapter_config     TEXT NOT NULL DEFAULT '{}',
  enable             BIGINT NOT NULL DEFAULT 0 CHECK (enable IN (0, 1)),
  use_pipeline_uuid  TEXT REFERENCES pipelines (uuid) ON DELETE RESTRICT,
  log_retention      BIGINT CHECK (log_retention IS NULL OR log_retention > 0),
  created_at         BIGINT NOT NULL,
  updated_at         BIGINT NOT NULL,
  rowid              BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX bots_created ON bots (created_at, rowid);
CREATE INDEX bots_pipeline ON bots (use_pipeline_uuid);

CREATE TABLE bot_log_sequences (
  bot_uuid  TEXT PRIMARY KEY NOT NULL REFERENCES bots (uuid) ON DELETE CASCADE,
  last_seq  BIGINT NOT NULL
);

CREATE TABLE bot_logs (
  bot_uuid            TEXT NOT NULL REFERENCES bots (uuid) ON DELETE CASCADE,
  seq_id              BIGINT NOT NULL,
  timestamp           BIGINT NOT NULL,
  level               TEXT NOT NULL,
  text                TEXT NOT NULL,
  images              TEXT NOT NULL DEFAULT '[]',
  message_session_id  TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (bot_uuid, seq_id)
);

-- An identity never hands out a number twice, as SQLite's AUTOINCREMENT.
CREATE TABLE tasks (
  id              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  task_type       TEXT NOT NULL,
  kind            TEXT NOT NULL,
  name            TEXT NOT NULL DEFAULT '',
  label           TEXT NOT NULL DEFAULT '',
  status          TEXT NOT NULL,
  current_action  TEXT NOT NULL DEFAULT '',
  log             TEXT NOT NULL DEFAULT '',
  metadata        TEXT NOT NULL DEFAULT '{}',
  exception       TEXT NOT NULL DEFAULT '',
  result          TEXT NOT NULL DEFAULT 'null',
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);
CREATE INDEX tasks_status ON tasks (status);

CREATE TABLE users (
  username          TEXT PRIMARY KEY NOT NULL,
  password_hash     TEXT NOT NULL,
  created_at        BIGINT NOT NULL,
  updated_at        BIGINT NOT NULL,
  token_generation  BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE api_keys (
  id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  key_hash     TEXT NOT NULL UNIQUE,
  masked_key   TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  updated_at   BIGINT NOT NULL
);

CREATE TABLE settings (
  key    TEXT PRIMARY KEY NOT NULL,
  value  TEXT NOT NULL
);

CREATE TABLE conversations (
  id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  pipeline_uuid  TEXT NOT NULL REFERENCES pipelines (uuid) ON DELETE CASCADE,
  bot_uuid       TEXT NOT NULL REFERENCES bots (uuid) ON DELETE CASCADE,
  session_id     TEXT NOT NULL,
  last_seq       BIGINT NOT NULL DEFAULT 0,
  last_round     BIGINT NOT NULL DEFAULT 0,
  UNIQUE (pipeline_uuid, bot_uuid, session_id)
);
CREATE INDEX conversations_bot ON conversations (bot_uuid);

CREATE TABLE conversation_turns (
  conversation_id  BIGINT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  seq              BIGINT NOT NULL,
  round            BIGINT NOT NULL,
  message          TEXT NOT NULL,
  created_at       BIGINT NOT NULL,
  PRIMARY KEY (conversation_id, seq)
);

CREATE TABLE plugins (
  author          TEXT COLLATE "C" NOT NULL,
  name            TEXT COLLATE "C" NOT NULL,
  version         TEXT NOT NULL,
  enabled         BIGINT NOT NULL DEFAULT 1,
  priority        BIGINT NOT NULL DEFAULT 0,
  install_source  TEXT NOT NULL DEFAULT '',
  config          TEXT NOT NULL DEFAULT '{}',
  manifest        TEXT NOT NULL DEFAULT '{}',
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL,
  allow_network   BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (author, name)
);

CREATE TABLE plugin_storage (
  author  TEXT COLLATE "C" NOT NULL,
  name    TEXT COLLATE "C" NOT NULL,
  item    TEXT NOT NULL,
  value   TEXT NOT NULL,
  PRIMARY KEY (author, name, item),
  FOREIGN KEY (author, name) REFERENCES plugins (author, name) ON DELETE CASCADE
);

CREATE TABLE knowledge_bases (
  uuid                TEXT PRIMARY KEY NOT NULL,
  name                TEXT NOT NULL,
  description         TEXT NOT NULL DEFAULT '',
  emoji               TEXT NOT NULL DEFAULT '',
  engine              TEXT NOT NULL,
  creation_settings   TEXT NOT NULL DEFAULT '{}',
  retrieval_settings  TEXT NOT NULL DEFAULT '{}',
  chunk_generation    BIGINT NOT NULL DEFAULT 0,
  created_at          BIGINT NOT NULL,
  updated_at          BIGINT NOT NULL,
  rowid               BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX knowledge_bases_created ON knowledge_bases (created_at, rowid);

CREATE TABLE knowledge_files (
  uuid         TEXT PRIMARY KEY NOT NULL,
  base_uuid    TEXT NOT NULL REFERENCES knowledge_bases (uuid) ON DELETE CASCADE,
  file_name    TEXT NOT NULL,
  extension    TEXT NOT NULL DEFAULT '',
  storage_key  TEXT NOT NULL DEFAULT '',
  size_bytes   BIGINT NOT NULL DEFAULT 0,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
  error        TEXT NOT NULL DEFAULT '',
  chunk_count  BIGINT NOT NULL DEFAULT 0,
  task_id      BIGINT NOT NULL DEFAULT 0,
  created_at   BIGINT NOT NULL,
  updated_at   BIGINT NOT NULL,
  rowid        BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX knowledge_files_base ON knowledge_files (base_uuid, created_at, rowid);
CREATE INDEX knowledge_files_unfinished ON knowledge_files (status)
  WHERE status IN ('pending', 'processing');

CREATE TABLE knowledge_chunks (
  id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  base_uuid   TEXT NOT NULL REFERENCES knowledge_bases (uuid) ON DELETE CASCADE,
  file_uuid   TEXT NOT NULL REFERENCES knowledge_files (uuid) ON DELETE CASCADE,
  parent_id   BIGINT REFERENCES knowledge_chunks (id) ON DELETE CASCADE,
  ordinal     BIGINT NOT NULL,
  text        TEXT NOT NULL,
  vector      BYTEA
);
CREATE INDEX knowledge_chunks_file ON knowledge_chunks (file_uuid);
CREATE INDEX knowledge_chunks_base ON knowledge_chunks (base_uuid, id) WHERE vector IS NOT NULL;
CREATE INDEX knowledge_chunks_parent ON knowledge_chunks (parent_id) WHERE parent_id IS NOT NULL;

-- The keyword side (see the comment above kMigrations). The cascade is a safety net: the
-- repository deletes these rows itself, as it must for SQLite's virtual table.
CREATE TABLE knowledge_fts (
  rowid      BIGINT PRIMARY KEY REFERENCES knowledge_chunks (id) ON DELETE CASCADE,
  text       TEXT NOT NULL,
  base_uuid  TEXT NOT NULL,
  document   TSVECTOR GENERATED ALWAYS AS (
      to_tsvector('simple', regexp_replace(text, '[!-/:-@[-`{-~]', ' ', 'g'))) STORED
);
CREATE INDEX knowledge_fts_document ON knowledge_fts USING GIN (document);
CREATE INDEX knowledge_fts_base ON knowledge_fts (base_uuid);

CREATE TABLE mcp_servers (
  uuid        TEXT PRIMARY KEY NOT NULL,
  name        TEXT NOT NULL UNIQUE,
  enable      BIGINT NOT NULL DEFAULT 0,
  mode        TEXT NOT NULL CHECK (mode IN ('stdio', 'sse', 'http')),
  extra_args  TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  rowid       BIGINT GENERATED ALWAYS AS IDENTITY
);

CREATE TABLE webhooks (
  id               BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name             TEXT NOT NULL,
  url              TEXT NOT NULL,
  description      TEXT NOT NULL DEFAULT '',
  enabled          BIGINT NOT NULL DEFAULT 1,
  secret           TEXT NOT NULL,
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL,
  last_status      TEXT NOT NULL DEFAULT '',
  last_http_status BIGINT NOT NULL DEFAULT 0,
  last_error       TEXT NOT NULL DEFAULT '',
  last_delivery_at BIGINT,
  deliveries       BIGINT NOT NULL DEFAULT 0,
  failures         BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE monitoring_messages (
  id TEXT PRIMARY KEY NOT NULL, timestamp BIGINT NOT NULL,
  bot_id TEXT NOT NULL, bot_name TEXT NOT NULL, pipeline_id TEXT NOT NULL,
  pipeline_name TEXT NOT NULL, message_content TEXT NOT NULL, session_id TEXT NOT NULL,
  status TEXT NOT NULL, level TEXT NOT NULL, platform TEXT, user_id TEXT, user_name TEXT,
  runner_name TEXT, variables TEXT, role TEXT);
CREATE INDEX monitoring_messages_time ON monitoring_messages (timestamp, status);
CREATE INDEX monitoring_messages_bot ON monitoring_messages (bot_id, timestamp, status);
CREATE INDEX monitoring_messages_pipeline ON monitoring_messages (pipeline_id, timestamp, status);
CREATE INDEX monitoring_messages_session ON monitoring_messages (session_id, timestamp);

CREATE TABLE monitoring_llm_calls (
  id TEXT PRIMARY KEY NOT NULL, timestamp BIGINT NOT NULL, model_name TEXT NOT NULL,
  input_tokens BIGINT NOT NULL, output_tokens BIGINT NOT NULL, total_tokens BIGINT NOT NULL,
  duration BIGINT NOT NULL, cost DOUBLE PRECISION, status TEXT NOT NULL, bot_id TEXT NOT NULL,
  bot_name TEXT NOT NULL, pipeline_id TEXT NOT NULL, pipeline_name TEXT NOT NULL,
  session_id TEXT NOT NULL, error_message TEXT, message_id TEXT);
CREATE INDEX monitoring_llm_calls_time ON monitoring_llm_calls (timestamp);
CREATE INDEX monitoring_llm_calls_bot ON monitoring_llm_calls (bot_id, timestamp);
CREATE INDEX monitoring_llm_calls_pipeline ON monitoring_llm_calls (pipeline_id, timestamp);
CREATE INDEX monitoring_llm_calls_message ON monitoring_llm_calls (message_id);

CREATE TABLE monitoring_embedding_calls (
  id TEXT PRIMARY KEY NOT NULL, timestamp BIGINT NOT NULL, model_name TEXT NOT NULL,
  prompt_tokens BIGINT NOT NULL, total_tokens BIGINT NOT NULL, duration BIGINT NOT NULL,
  input_count BIGINT NOT NULL, status TEXT NOT NULL, error_message TEXT,
  knowledge_base_id TEXT, query_text TEXT, session_id TEXT, message_id TEXT, call_type TEXT);
CREATE INDEX monitoring_embedding_calls_time ON monitoring_embedding_calls (timestamp);
CREATE INDEX monitoring_embedding_calls_base
  ON monitoring_embedding_calls (knowledge_base_id, timestamp);

CREATE TABLE monitoring_sessions (
  session_id TEXT NOT NULL, bot_id TEXT NOT NULL, bot_name TEXT NOT NULL,
  pipeline_id TEXT NOT NULL, pipeline_name TEXT NOT NULL, message_count BIGINT NOT NULL,
  start_time BIGINT NOT NULL, last_activity BIGINT NOT NULL, is_active BIGINT NOT NULL,
  platform TEXT, user_id TEXT, user_name TEXT, PRIMARY KEY (session_id, bot_id));
CREATE INDEX monitoring_sessions_start ON monitoring_sessions (start_time);
CREATE INDEX monitoring_sessions_last ON monitoring_sessions (last_activity);
CREATE INDEX monitoring_sessions_bot ON monitoring_sessions (bot_id, start_time);
CREATE INDEX monitoring_sessions_pipeline ON monitoring_sessions (pipeline_id, start_time);

CREATE TABLE monitoring_errors (
  id TEXT PRIMARY KEY NOT NULL, timestamp BIGINT NOT NULL, error_type TEXT NOT NULL,
  error_message TEXT NOT NULL, bot_id TEXT NOT NULL, bot_name TEXT NOT NULL,
  pipeline_id TEXT NOT NULL, pipeline_name TEXT NOT NULL, session_id TEXT, stack_trace TEXT,
  message_id TEXT);
CREATE INDEX monitoring_errors_time ON monitoring_errors (timestamp);
CREATE INDEX monitoring_errors_bot ON monitoring_errors (bot_id, timestamp);
CREATE INDEX monitoring_errors_pipeline ON monitoring_errors (pipeline_id, timestamp);
CREATE INDEX monitoring_errors_message ON monitoring_errors (message_id);

-- One row per rated reply and user (SQLite migration 10).
CREATE TABLE monitoring_feedback (
  id TEXT PRIMARY KEY NOT NULL, timestamp BIGINT NOT NULL, feedback_id TEXT NOT NULL,
  feedback_type BIGINT NOT NULL, feedback_content TEXT, inaccurate_reasons TEXT, bot_id TEXT,
  bot_name TEXT, pipeline_id TEXT, pipeline_name TEXT, session_id TEXT, message_id TEXT,
  stream_id TEXT, user_id TEXT NOT NULL DEFAULT '', platform TEXT,
  UNIQUE (feedback_id, user_id));
CREATE INDEX monitoring_feedback_time ON monitoring_feedback (timestamp);
CREATE INDEX monitoring_feedback_bot ON monitoring_feedback (bot_id, timestamp);

CREATE TABLE monitoring_hourly (
  kind TEXT NOT NULL, hour BIGINT NOT NULL, bot_id TEXT NOT NULL, pipeline_id TEXT NOT NULL,
  n BIGINT NOT NULL, success BIGINT NOT NULL,
  PRIMARY KEY (kind, hour, bot_id, pipeline_id));
)sql"},
    {11, "bot leases", R"sql(
CREATE TABLE bot_leases (
  bot_uuid    TEXT PRIMARY KEY NOT NULL,
  owner       TEXT NOT NULL,
  owner_url   TEXT NOT NULL DEFAULT '',
  generation  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL
);
CREATE INDEX bot_leases_owner ON bot_leases (owner);
)sql"},
    {12, "task leases", R"sql(
ALTER TABLE tasks ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN expires_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN spec TEXT NOT NULL DEFAULT '{}';
ALTER TABLE tasks ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;
CREATE INDEX tasks_claimable ON tasks (status, expires_at);
)sql"},
};

}  // namespace

std::span<const PgMigration> PostgresMigrations() { return kMigrations; }

}  // namespace sb::storage::postgres
