// What a LangBot 4.9.5 database holds that Switchboard can take over, read into typed records.
// Reading checks that the source is LangBot's (its `metadata.database_version`), of the schema
// this importer knows, and readable row by row; a row that cannot be read is kept as a problem
// naming table, key and column, never guessed at.
//   auto snap = ReadSnapshot(source);       // kInvalidArgument: not LangBot / unknown version
//   for (auto& p : snap->problems) ...      // rows that could not be read
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "langbot_import/source.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::langbot_import {

// The schema version LangBot 4.9.5 records (`constants.required_database_version`).
inline constexpr int kSupportedSchemaVersion = 24;

struct LbTimes {
  std::optional<util::TimePoint> created_at;
  std::optional<util::TimePoint> updated_at;
};

struct LbProvider {
  std::string uuid, name, requester, base_url;
  std::vector<std::string> api_keys;
  LbTimes times;
};

struct LbModel {
  bool embedding = false;
  std::string uuid, name, provider_uuid;
  std::vector<std::string> abilities;  // LLM models only
  util::JsonObject extra_args;
  int prefered_ranking = 0;
  LbTimes times;
};

struct LbPipeline {
  std::string uuid, name, description, emoji, for_version;
  bool is_default = false;
  util::JsonArray stages;
  util::JsonObject config;
  util::JsonObject extensions_preferences;
  LbTimes times;
};

struct LbBot {
  std::string uuid, name, description, adapter;
  util::JsonObject adapter_config;
  bool enable = false;
  std::optional<std::string> use_pipeline_uuid;
  LbTimes times;
};

struct LbApiKey {
  std::int64_t id = 0;
  std::string name, key, description;  // LangBot keeps the key itself, not a hash
  LbTimes times;
};

struct LbPluginSetting {
  std::string author, name, install_source;
  bool enabled = true;
  int priority = 0;
  util::JsonObject config;
};

struct LbMcpServer {
  std::string uuid, name, mode;
  bool enable = false;
  util::JsonObject extra_args;
  LbTimes times;
};

struct LbKnowledgeBase {
  std::string uuid, name, engine;
};

struct LbUser {
  std::string user, password_hash, account_type;  // argon2 (argon2-cffi's encoded form)
};

struct LbWebhook {
  std::int64_t id = 0;
  std::string name, url, description;
  bool enabled = true;
};

// A row that could not be read: "bots 5f0c…: adapter_config is not valid JSON (offset 3)".
struct RowProblem {
  std::string table;
  std::string key;  // the row's uuid / id / author/name, as far as it could be read
  std::string message;
};

struct Snapshot {
  int schema_version = 0;
  std::vector<LbProvider> providers;
  std::vector<LbModel> models;  // LLM models, then embedding models
  std::vector<LbPipeline> pipelines;
  std::vector<LbBot> bots;
  std::vector<LbApiKey> api_keys;
  std::vector<LbPluginSetting> plugins;
  std::vector<LbMcpServer> mcp_servers;
  std::vector<LbKnowledgeBase> knowledge_bases;
  std::vector<LbWebhook> webhooks;
  std::vector<LbUser> users;
  std::vector<RowProblem> problems;
};

// Reads everything. kInvalidArgument with a sentence for a person when the source is not a
// LangBot database, records a schema version other than kSupportedSchemaVersion, lacks a table
// or column that version has, or cannot be read at all.
util::Result<Snapshot> ReadSnapshot(Source& source);

// "2025-03-01 12:00:00[.ffffff]" (SQLite, UTC) or "2025-03-01T12:00:00[.ffffff][+00:00]"
// (PostgreSQL's text form); nullopt for anything else.
std::optional<util::TimePoint> ParseLangbotTime(const std::string& text);

}  // namespace sb::langbot_import
