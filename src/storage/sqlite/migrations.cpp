#include "storage/sqlite/migrations.hpp"

namespace sb::storage::sqlite {

namespace {

// Conventions: uuids and JSON as TEXT, timestamps as INTEGER unix milliseconds, booleans as 0/1.
// Every list is ordered by (created_at, rowid), so the indexes below lead with created_at.
constexpr sql::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE providers (
  uuid        TEXT PRIMARY KEY NOT NULL,
  name        TEXT NOT NULL,
  requester   TEXT NOT NULL,
  base_url    TEXT NOT NULL,
  api_keys    TEXT NOT NULL DEFAULT '[]',
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);
CREATE INDEX providers_created ON providers (created_at);

CREATE TABLE models (
  uuid              TEXT PRIMARY KEY NOT NULL,
  kind              TEXT NOT NULL CHECK (kind IN ('llm', 'embedding')),
  name              TEXT NOT NULL,
  description       TEXT NOT NULL DEFAULT '',
  provider_uuid     TEXT NOT NULL REFERENCES providers (uuid) ON DELETE RESTRICT,
  requester_config  TEXT NOT NULL DEFAULT '{}',
  abilities         TEXT NOT NULL DEFAULT '[]',
  extra_args        TEXT NOT NULL DEFAULT '{}',
  prefered_ranking  INTEGER NOT NULL DEFAULT 0,
  dimensions        INTEGER,
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL
);
CREATE INDEX models_kind_created ON models (kind, created_at);
-- Also serves the foreign key check when a provider is deleted.
CREATE INDEX models_provider ON models (provider_uuid, kind);

CREATE TABLE pipelines (
  uuid                    TEXT PRIMARY KEY NOT NULL,
  name                    TEXT NOT NULL,
  description             TEXT NOT NULL DEFAULT '',
  emoji                   TEXT NOT NULL DEFAULT '',
  config                  TEXT NOT NULL DEFAULT '{}',
  stages                  TEXT NOT NULL DEFAULT '[]',
  is_default              INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
  for_version             TEXT NOT NULL DEFAULT '',
  extensions_preferences  TEXT NOT NULL DEFAULT '{}',
  created_at              INTEGER NOT NULL,
  updated_at              INTEGER NOT NULL
);
CREATE INDEX pipelines_created ON pipelines (created_at);
CREATE UNIQUE INDEX pipelines_one_default ON pipelines (is_default) WHERE is_default = 1;

CREATE TABLE bots (
  uuid               TEXT PRIMARY KEY NOT NULL,
  name               TEXT NOT NULL,
  description        TEXT NOT NULL DEFAULT '',
  adapter            TEXT NOT NULL,
  adapter_config     TEXT NOT NULL DEFAULT '{}',
  enable             INTEGER NOT NULL DEFAULT 0 CHECK (enable IN (0, 1)),
  use_pipeline_uuid  TEXT REFERENCES pipelines (uuid) ON DELETE RESTRICT,
  log_retention      INTEGER CHECK (log_retention IS NULL OR log_retention > 0),
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL
);
CREATE INDEX bots_created ON bots (created_at);
CREATE INDEX bots_pipeline ON bots (use_pipeline_uuid);

-- The last seq_id given per bot. Kept apart from bot_logs so retention, which deletes the oldest
-- rows, can never make a number be given twice.
CREATE TABLE bot_log_sequences (
  bot_uuid  TEXT PRIMARY KEY NOT NULL REFERENCES bots (uuid) ON DELETE CASCADE,
  last_seq  INTEGER NOT NULL
);

CREATE TABLE bot_logs (
  bot_uuid            TEXT NOT NULL REFERENCES bots (uuid) ON DELETE CASCADE,
  seq_id              INTEGER NOT NULL,
  timestamp           INTEGER NOT NULL,
  level               TEXT NOT NULL,
  text                TEXT NOT NULL,
  images              TEXT NOT NULL DEFAULT '[]',
  message_session_id  TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (bot_uuid, seq_id)
) WITHOUT ROWID;

-- AUTOINCREMENT: a task id is never reused, so a client polling an old id never sees another task.
CREATE TABLE tasks (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
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
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);
CREATE INDEX tasks_status ON tasks (status);

CREATE TABLE users (
  username       TEXT PRIMARY KEY NOT NULL,
  password_hash  TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
);

CREATE TABLE api_keys (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  key_hash     TEXT NOT NULL UNIQUE,
  masked_key   TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);

CREATE TABLE settings (
  key    TEXT PRIMARY KEY NOT NULL,
  value  TEXT NOT NULL
);
)sql"},
    {2, R"sql(
-- Conversation memory. The counters live in the conversation row so trimming old turns never
-- makes a round or seq number be given twice.
CREATE TABLE conversations (
  id             INTEGER PRIMARY KEY NOT NULL,
  pipeline_uuid  TEXT NOT NULL REFERENCES pipelines (uuid) ON DELETE CASCADE,
  bot_uuid       TEXT NOT NULL REFERENCES bots (uuid) ON DELETE CASCADE,
  session_id     TEXT NOT NULL,
  last_seq       INTEGER NOT NULL DEFAULT 0,
  last_round     INTEGER NOT NULL DEFAULT 0,
  UNIQUE (pipeline_uuid, bot_uuid, session_id)
);
-- The unique key serves lookups and the pipeline side; this one the bot side.
CREATE INDEX conversations_bot ON conversations (bot_uuid);

-- One row per message; `round` counts user messages, so rounds are dense and the newest N are a
-- range on it. `message` is the ChatMessage as JSON.
CREATE TABLE conversation_turns (
  conversation_id  INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  seq              INTEGER NOT NULL,
  round            INTEGER NOT NULL,
  message          TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  PRIMARY KEY (conversation_id, seq)
) WITHOUT ROWID;
)sql"},
    {3, R"sql(
-- Installed plugins: the version in use, whether it runs, its config, a copy of its manifest.
CREATE TABLE plugins (
  author          TEXT NOT NULL,
  name            TEXT NOT NULL,
  version         TEXT NOT NULL,
  enabled         INTEGER NOT NULL DEFAULT 1,
  priority        INTEGER NOT NULL DEFAULT 0,
  install_source  TEXT NOT NULL DEFAULT '',
  config          TEXT NOT NULL DEFAULT '{}',
  manifest        TEXT NOT NULL DEFAULT '{}',
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  PRIMARY KEY (author, name)
);

-- What a plugin keeps through the core (storage_get / storage_set).
CREATE TABLE plugin_storage (
  author  TEXT NOT NULL,
  name    TEXT NOT NULL,
  item    TEXT NOT NULL,
  value   TEXT NOT NULL,
  PRIMARY KEY (author, name, item),
  FOREIGN KEY (author, name) REFERENCES plugins (author, name) ON DELETE CASCADE
) WITHOUT ROWID;
)sql"},
    {4, R"sql(
-- User tokens carry the generation they were issued for; a password change or reset moves it up,
-- which ends every token issued before.
ALTER TABLE users ADD COLUMN token_generation INTEGER NOT NULL DEFAULT 0;
)sql"},
    {5, R"sql(
-- The admin's leave for a plugin to reach the network (its manifest must also ask for it).
ALTER TABLE plugins ADD COLUMN allow_network INTEGER NOT NULL DEFAULT 0;
)sql"},
    {6, R"sql(
-- Knowledge bases (issue 17), in LangBot's shape: the engine and its settings as JSON.
-- chunk_generation moves with every change of the base's chunks, so an in-memory vector index
-- built at another generation is known to be stale.
CREATE TABLE knowledge_bases (
  uuid                TEXT PRIMARY KEY NOT NULL,
  name                TEXT NOT NULL,
  description         TEXT NOT NULL DEFAULT '',
  emoji               TEXT NOT NULL DEFAULT '',
  engine              TEXT NOT NULL,
  creation_settings   TEXT NOT NULL DEFAULT '{}',
  retrieval_settings  TEXT NOT NULL DEFAULT '{}',
  chunk_generation    INTEGER NOT NULL DEFAULT 0,
  created_at          INTEGER NOT NULL,
  updated_at          INTEGER NOT NULL
);
CREATE INDEX knowledge_bases_created ON knowledge_bases (created_at);

CREATE TABLE knowledge_files (
  uuid         TEXT PRIMARY KEY NOT NULL,
  base_uuid    TEXT NOT NULL REFERENCES knowledge_bases (uuid) ON DELETE CASCADE,
  file_name    TEXT NOT NULL,
  extension    TEXT NOT NULL DEFAULT '',
  storage_key  TEXT NOT NULL DEFAULT '',
  size_bytes   INTEGER NOT NULL DEFAULT 0,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
  error        TEXT NOT NULL DEFAULT '',
  chunk_count  INTEGER NOT NULL DEFAULT 0,
  task_id      INTEGER NOT NULL DEFAULT 0,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
CREATE INDEX knowledge_files_base ON knowledge_files (base_uuid, created_at);
CREATE INDEX knowledge_files_unfinished ON knowledge_files (status)
  WHERE status IN ('pending', 'processing');

-- Searchable chunks have a vector (float32, little-endian) and a row in knowledge_fts with the
-- same rowid; parents (parent-child mode) have neither and are returned in their children's place.
CREATE TABLE knowledge_chunks (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  base_uuid   TEXT NOT NULL REFERENCES knowledge_bases (uuid) ON DELETE CASCADE,
  file_uuid   TEXT NOT NULL REFERENCES knowledge_files (uuid) ON DELETE CASCADE,
  parent_id   INTEGER REFERENCES knowledge_chunks (id) ON DELETE CASCADE,
  ordinal     INTEGER NOT NULL,
  text        TEXT NOT NULL,
  vector      BLOB
);
CREATE INDEX knowledge_chunks_file ON knowledge_chunks (file_uuid);
CREATE INDEX knowledge_chunks_base ON knowledge_chunks (base_uuid, id) WHERE vector IS NOT NULL;
CREATE INDEX knowledge_chunks_parent ON knowledge_chunks (parent_id) WHERE parent_id IS NOT NULL;

-- The keyword side: the chunk's text with CJK characters spaced apart (knowledge/
-- retrieval_scoring.hpp), rowid = knowledge_chunks.id. Kept in step by the repository.
CREATE VIRTUAL TABLE knowledge_fts USING fts5(
  text, base_uuid UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
)sql"},
    // MCP servers (LangBot 4.9.5's mcp_servers): extra_args is JSON sealed with the secret box.
    {7, R"sql(
CREATE TABLE mcp_servers (
  uuid        TEXT PRIMARY KEY NOT NULL,
  name        TEXT NOT NULL UNIQUE,
  enable      INTEGER NOT NULL DEFAULT 0,
  mode        TEXT NOT NULL CHECK (mode IN ('stdio', 'sse', 'http')),
  extra_args  TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);
)sql"},
    {8, R"sql(
-- Outgoing webhooks (issue 18), LangBot's columns plus the signing secret and how the last push
-- went.
CREATE TABLE webhooks (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  name             TEXT NOT NULL,
  url              TEXT NOT NULL,
  description      TEXT NOT NULL DEFAULT '',
  enabled          INTEGER NOT NULL DEFAULT 1,
  secret           TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  last_status      TEXT NOT NULL DEFAULT '',
  last_http_status INTEGER NOT NULL DEFAULT 0,
  last_error       TEXT NOT NULL DEFAULT '',
  last_delivery_at INTEGER,
  deliveries       INTEGER NOT NULL DEFAULT 0,
  failures         INTEGER NOT NULL DEFAULT 0
);
)sql"},
    // Monitoring (LangBot's monitoring_* tables). Times are unix millis. Every list route filters
    // by bot or pipeline and orders by time, so each table has (bot, time) and (pipeline, time)
    // indexes next to the time index; retention deletes by time.
    {9, R"sql(
CREATE TABLE monitoring_messages (
  id TEXT PRIMARY KEY NOT NULL, timestamp INTEGER NOT NULL,
  bot_id TEXT NOT NULL, bot_name TEXT NOT NULL, pipeline_id TEXT NOT NULL,
  pipeline_name TEXT NOT NULL, message_content TEXT NOT NULL, session_id TEXT NOT NULL,
  status TEXT NOT NULL, level TEXT NOT NULL, platform TEXT, user_id TEXT, user_name TEXT,
  runner_name TEXT, variables TEXT, role TEXT);
-- status in the index: the overview's total and success count are one scan of the index alone.
CREATE INDEX monitoring_messages_time ON monitoring_messages (timestamp, status);
CREATE INDEX monitoring_messages_bot ON monitoring_messages (bot_id, timestamp, status);
CREATE INDEX monitoring_messages_pipeline ON monitoring_messages (pipeline_id, timestamp, status);
CREATE INDEX monitoring_messages_session ON monitoring_messages (session_id, timestamp);

CREATE TABLE monitoring_llm_calls (
  id TEXT PRIMARY KEY NOT NULL, timestamp INTEGER NOT NULL, model_name TEXT NOT NULL,
  input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, total_tokens INTEGER NOT NULL,
  duration INTEGER NOT NULL, cost REAL, status TEXT NOT NULL, bot_id TEXT NOT NULL,
  bot_name TEXT NOT NULL, pipeline_id TEXT NOT NULL, pipeline_name TEXT NOT NULL,
  session_id TEXT NOT NULL, error_message TEXT, message_id TEXT);
CREATE INDEX monitoring_llm_calls_time ON monitoring_llm_calls (timestamp);
CREATE INDEX monitoring_llm_calls_bot ON monitoring_llm_calls (bot_id, timestamp);
CREATE INDEX monitoring_llm_calls_pipeline ON monitoring_llm_calls (pipeline_id, timestamp);
CREATE INDEX monitoring_llm_calls_message ON monitoring_llm_calls (message_id);

CREATE TABLE monitoring_embedding_calls (
  id TEXT PRIMARY KEY NOT NULL, timestamp INTEGER NOT NULL, model_name TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL, total_tokens INTEGER NOT NULL, duration INTEGER NOT NULL,
  input_count INTEGER NOT NULL, status TEXT NOT NULL, error_message TEXT,
  knowledge_base_id TEXT, query_text TEXT, session_id TEXT, message_id TEXT, call_type TEXT);
CREATE INDEX monitoring_embedding_calls_time ON monitoring_embedding_calls (timestamp);
CREATE INDEX monitoring_embedding_calls_base ON monitoring_embedding_calls (knowledge_base_id, timestamp);

-- A session id ("person_<id>") is the platform's chat, so two bots can share one: the key is the
-- pair (LangBot's key is the session id alone, and mixes them).
CREATE TABLE monitoring_sessions (
  session_id TEXT NOT NULL, bot_id TEXT NOT NULL, bot_name TEXT NOT NULL,
  pipeline_id TEXT NOT NULL, pipeline_name TEXT NOT NULL, message_count INTEGER NOT NULL,
  start_time INTEGER NOT NULL, last_activity INTEGER NOT NULL, is_active INTEGER NOT NULL,
  platform TEXT, user_id TEXT, user_name TEXT, PRIMARY KEY (session_id, bot_id));
CREATE INDEX monitoring_sessions_start ON monitoring_sessions (start_time);
CREATE INDEX monitoring_sessions_last ON monitoring_sessions (last_activity);
CREATE INDEX monitoring_sessions_bot ON monitoring_sessions (bot_id, start_time);
CREATE INDEX monitoring_sessions_pipeline ON monitoring_sessions (pipeline_id, start_time);

CREATE TABLE monitoring_errors (
  id TEXT PRIMARY KEY NOT NULL, timestamp INTEGER NOT NULL, error_type TEXT NOT NULL,
  error_message TEXT NOT NULL, bot_id TEXT NOT NULL, bot_name TEXT NOT NULL,
  pipeline_id TEXT NOT NULL, pipeline_name TEXT NOT NULL, session_id TEXT, stack_trace TEXT,
  message_id TEXT);
CREATE INDEX monitoring_errors_time ON monitoring_errors (timestamp);
CREATE INDEX monitoring_errors_bot ON monitoring_errors (bot_id, timestamp);
CREATE INDEX monitoring_errors_pipeline ON monitoring_errors (pipeline_id, timestamp);
CREATE INDEX monitoring_errors_message ON monitoring_errors (message_id);

CREATE TABLE monitoring_feedback (
  id TEXT PRIMARY KEY NOT NULL, timestamp INTEGER NOT NULL, feedback_id TEXT NOT NULL UNIQUE,
  feedback_type INTEGER NOT NULL, feedback_content TEXT, inaccurate_reasons TEXT, bot_id TEXT,
  bot_name TEXT, pipeline_id TEXT, pipeline_name TEXT, session_id TEXT, message_id TEXT,
  stream_id TEXT, user_id TEXT, platform TEXT);
CREATE INDEX monitoring_feedback_time ON monitoring_feedback (timestamp);
CREATE INDEX monitoring_feedback_bot ON monitoring_feedback (bot_id, timestamp);

-- Hourly counts per table, bot and pipeline (hour = unix millis / 3600000), written with the
-- records: the routes' totals over a month of records read these instead of every row.
CREATE TABLE monitoring_hourly (
  kind TEXT NOT NULL, hour INTEGER NOT NULL, bot_id TEXT NOT NULL, pipeline_id TEXT NOT NULL,
  n INTEGER NOT NULL, success INTEGER NOT NULL,
  PRIMARY KEY (kind, hour, bot_id, pipeline_id)) WITHOUT ROWID;
)sql"},
    // Feedback is one row per rated reply AND user (several people of a group may rate one
    // reply); LangBot's unique feedback_id kept only the first. SQLite cannot change a
    // constraint in place, so the table is rebuilt.
    {10, R"sql(
CREATE TABLE monitoring_feedback_v10 (
  id TEXT PRIMARY KEY NOT NULL, timestamp INTEGER NOT NULL, feedback_id TEXT NOT NULL,
  feedback_type INTEGER NOT NULL, feedback_content TEXT, inaccurate_reasons TEXT, bot_id TEXT,
  bot_name TEXT, pipeline_id TEXT, pipeline_name TEXT, session_id TEXT, message_id TEXT,
  stream_id TEXT, user_id TEXT NOT NULL DEFAULT '', platform TEXT,
  UNIQUE (feedback_id, user_id));
INSERT INTO monitoring_feedback_v10 (id, timestamp, feedback_id, feedback_type, feedback_content,
  inaccurate_reasons, bot_id, bot_name, pipeline_id, pipeline_name, session_id, message_id,
  stream_id, user_id, platform)
  SELECT id, timestamp, feedback_id, feedback_type, feedback_content, inaccurate_reasons, bot_id,
  bot_name, pipeline_id, pipeline_name, session_id, message_id, stream_id, COALESCE(user_id, ''),
  platform FROM monitoring_feedback;
DROP TABLE monitoring_feedback;
ALTER TABLE monitoring_feedback_v10 RENAME TO monitoring_feedback;
CREATE INDEX monitoring_feedback_time ON monitoring_feedback (timestamp);
CREATE INDEX monitoring_feedback_bot ON monitoring_feedback (bot_id, timestamp);
)sql"},
    // Several instances on one database: which one runs each bot's platform connection.
    {11, R"sql(
-- A lease lapses at expires_at (unix ms by the database's clock) unless its owner renews it;
-- generation grows with every change of owner. owner_url is where the owner takes webhook calls
-- forwarded by the other instances. No foreign key: a lease may outlive its bot for a moment.
CREATE TABLE bot_leases (
  bot_uuid    TEXT PRIMARY KEY NOT NULL,
  owner       TEXT NOT NULL,
  owner_url   TEXT NOT NULL DEFAULT '',
  generation  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
);
CREATE INDEX bot_leases_owner ON bot_leases (owner);
)sql"},
    // Several instances on one database: a task is run by the instance holding its lease (owner,
    // until expires_at by the database's clock, renewed while it runs); one whose owner died is
    // claimed and resumed elsewhere from what `spec` records (what to install, which file).
    {12, R"sql(
ALTER TABLE tasks ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN spec TEXT NOT NULL DEFAULT '{}';
ALTER TABLE tasks ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tasks_claimable ON tasks (status, expires_at);
)sql"},
};

}  // namespace

std::span<const sql::Migration> SchemaMigrations() { return kMigrations; }

}  // namespace sb::storage::sqlite
