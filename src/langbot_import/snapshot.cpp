#include "langbot_import/snapshot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <map>

#include "util/ids.hpp"

namespace sb::langbot_import {
namespace {

using util::ErrorCode;
using util::Fail;

// More rows than any installation has; a file claiming more is not read into memory.
constexpr std::size_t kMaxRowsPerTable = 100000;

// The columns LangBot 4.9.5's entities declare (src/langbot/pkg/entity/persistence/*.py) for
// each table the importer reads. A database at schema version 24 has at least these; extra
// columns (left over by SQLite migrations that cannot drop them) are ignored.
struct TableSpec {
  const char* table;
  std::vector<std::string> columns;
};

const std::vector<TableSpec>& Tables() {
  static const std::vector<TableSpec> tables = {
      {"model_providers",
       {"uuid", "name", "requester", "base_url", "api_keys", "created_at", "updated_at"}},
      {"llm_models",
       {"uuid", "name", "provider_uuid", "abilities", "extra_args", "prefered_ranking",
        "created_at", "updated_at"}},
      {"embedding_models",
       {"uuid", "name", "provider_uuid", "extra_args", "prefered_ranking", "created_at",
        "updated_at"}},
      {"legacy_pipelines",
       {"uuid", "name", "description", "emoji", "created_at", "updated_at", "for_version",
        "is_default", "stages", "config", "extensions_preferences"}},
      {"bots",
       {"uuid", "name", "description", "adapter", "adapter_config", "enable", "use_pipeline_uuid",
        "created_at", "updated_at"}},
      {"api_keys", {"id", "name", "key", "description", "created_at", "updated_at"}},
      {"plugin_settings",
       {"plugin_author", "plugin_name", "enabled", "priority", "config", "install_source"}},
      {"mcp_servers", {"uuid", "name", "enable", "mode", "extra_args", "created_at", "updated_at"}},
      {"knowledge_bases", {"uuid", "name", "knowledge_engine_plugin_id"}},
      {"webhooks", {"id", "name", "url", "description", "enabled"}},
      {"users", {"id", "user", "password", "account_type"}},
  };
  return tables;
}

// Reads one row's cells into typed values; every failure becomes a RowProblem and marks the row
// bad, so all problems of a row are reported at once.
class Cells {
 public:
  Cells(const char* table, const Row& row, std::vector<RowProblem>& problems)
      : table_(table), row_(row), problems_(problems) {}

  void SetKey(std::string key) { key_ = std::move(key); }
  bool ok() const { return ok_; }

  std::optional<std::string> Optional(const std::string& column) const {
    auto it = row_.find(column);
    return it == row_.end() ? std::nullopt : it->second;
  }

  std::string Text(const std::string& column) {
    auto v = Optional(column);
    if (!v) {
      Problem(column + " is NULL");
      return {};
    }
    return *v;
  }

  std::string TextOr(const std::string& column, std::string fallback) {
    return Optional(column).value_or(std::move(fallback));
  }

  std::string Uuid(const std::string& column) {
    std::string v = Text(column);
    if (ok_ && !util::IsUuid(v)) Problem(column + " '" + v.substr(0, 64) + "' is not a UUID");
    return v;
  }

  bool Bool(const std::string& column) {
    auto v = Optional(column);
    if (!v) {
      Problem(column + " is NULL");
      return false;
    }
    if (*v == "1" || *v == "t" || *v == "true") return true;
    if (*v == "0" || *v == "f" || *v == "false") return false;
    Problem(column + " '" + v->substr(0, 16) + "' is not a boolean");
    return false;
  }

  std::int64_t Int(const std::string& column) {
    auto v = Optional(column);
    std::int64_t out = 0;
    if (!v) {
      Problem(column + " is NULL");
      return 0;
    }
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc() || end != v->data() + v->size()) {
      Problem(column + " '" + v->substr(0, 16) + "' is not an integer");
    }
    return out;
  }

  // nullopt (and a problem) when NULL or not JSON.
  std::optional<util::Json> JsonValue(const std::string& column) {
    auto v = Optional(column);
    if (!v) {
      Problem(column + " is NULL");
      return std::nullopt;
    }
    auto parsed = util::ParseJson(*v);
    if (!parsed) {
      Problem(column + " is not valid JSON (" + parsed.error().message + ")");
      return std::nullopt;
    }
    return std::move(*parsed);
  }

  util::JsonObject Object(const std::string& column) {
    auto v = JsonValue(column);
    if (!v) return {};
    if (v->is_object()) return std::move(v->as_object());
    Problem(column + " is JSON " + util::JsonKindName(*v) + ", not an object");
    return {};
  }

  util::JsonArray Array(const std::string& column) {
    auto v = JsonValue(column);
    if (!v) return {};
    if (v->is_array()) return std::move(v->as_array());
    Problem(column + " is JSON " + util::JsonKindName(*v) + ", not an array");
    return {};
  }

  std::vector<std::string> Strings(const std::string& column) {
    std::vector<std::string> out;
    for (const auto& item : Array(column)) {
      if (!item.is_string()) {
        Problem(column + " holds a JSON " + util::JsonKindName(item) + ", not only strings");
        return {};
      }
      out.emplace_back(item.as_string());
    }
    return out;
  }

  LbTimes Times() {
    LbTimes t;
    if (auto v = Optional("created_at")) t.created_at = ParseLangbotTime(*v);
    if (auto v = Optional("updated_at")) t.updated_at = ParseLangbotTime(*v);
    return t;
  }

 private:
  void Problem(std::string message) {
    ok_ = false;
    problems_.push_back({table_, key_, std::move(message)});
  }

  const char* table_;
  const Row& row_;
  std::vector<RowProblem>& problems_;
  std::string key_;
  bool ok_ = true;
};

util::Result<std::vector<Row>> ReadTable(Source& source, const TableSpec& spec) {
  auto columns = source.Columns(spec.table);
  if (!columns) return tl::unexpected(columns.error());
  if (!*columns) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} has no table '{}', which LangBot 4.9.5 (schema version {}) "
                            "creates: the database is damaged or not LangBot's",
                            source.Describe(), spec.table, kSupportedSchemaVersion));
  }
  for (const auto& c : spec.columns) {
    if (std::find((*columns)->begin(), (*columns)->end(), c) == (*columns)->end()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{}: table '{}' has no column '{}', which LangBot 4.9.5 (schema "
                              "version {}) has: the database is damaged or not LangBot's",
                              source.Describe(), spec.table, c, kSupportedSchemaVersion));
    }
  }
  return source.Rows(spec.table, spec.columns, kMaxRowsPerTable);
}

util::Result<int> ReadSchemaVersion(Source& source) {
  const std::string not_langbot =
      fmt::format("{} is not a LangBot database (it has no metadata table with a database_version)",
                  source.Describe());
  auto columns = source.Columns("metadata");
  if (!columns) return tl::unexpected(columns.error());
  if (!*columns || std::find((*columns)->begin(), (*columns)->end(), "key") == (*columns)->end() ||
      std::find((*columns)->begin(), (*columns)->end(), "value") == (*columns)->end()) {
    return Fail(ErrorCode::kInvalidArgument, not_langbot);
  }
  auto rows = source.Rows("metadata", {"key", "value"}, kMaxRowsPerTable);
  if (!rows) return tl::unexpected(rows.error());
  for (const auto& row : *rows) {
    if (row.at("key") != "database_version") continue;
    const auto& value = row.at("value");
    int version = 0;
    if (value) {
      auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), version);
      if (ec == std::errc() && end == value->data() + value->size()) return version;
    }
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} records database_version '{}', which is not a number: the "
                            "database is damaged",
                            source.Describe(), value.value_or("NULL").substr(0, 32)));
  }
  return Fail(ErrorCode::kInvalidArgument, not_langbot);
}

}  // namespace

std::optional<util::TimePoint> ParseLangbotTime(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%*1[ T]%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  long micros = 0;
  std::string_view rest(text);
  rest.remove_prefix(static_cast<std::size_t>(consumed));
  if (!rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    int digits = 0;
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
      if (digits < 6) micros = micros * 10 + (rest.front() - '0'), ++digits;
      rest.remove_prefix(1);
    }
    for (; digits < 6; ++digits) micros *= 10;
  }
  // Naive timestamps are UTC (SQLite's CURRENT_TIMESTAMP); PostgreSQL's text form may add one.
  if (!rest.empty() && rest != "+00" && rest != "+00:00" && rest != "Z") return std::nullopt;
  const std::time_t seconds = timegm(&tm);
  if (seconds == static_cast<std::time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(seconds) + std::chrono::microseconds(micros);
}

util::Result<Snapshot> ReadSnapshot(Source& source) {
  auto version = ReadSchemaVersion(source);
  if (!version) return tl::unexpected(version.error());
  if (*version != kSupportedSchemaVersion) {
    const char* hint = *version < kSupportedSchemaVersion
                           ? "start LangBot 4.9.5 on it once so it migrates the database, then "
                             "import again"
                           : "it was written by a newer LangBot than 4.9.5";
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} has LangBot schema version {}; this import reads version {} "
                            "(LangBot 4.9.5): {}",
                            source.Describe(), *version, kSupportedSchemaVersion, hint));
  }
  Snapshot snap;
  snap.schema_version = *version;
  std::map<std::string, std::vector<Row>> tables;
  for (const auto& spec : Tables()) {
    auto rows = ReadTable(source, spec);
    if (!rows) return tl::unexpected(rows.error());
    tables[spec.table] = std::move(*rows);
  }
  auto& problems = snap.problems;

  for (const auto& row : tables["model_providers"]) {
    Cells c("model_providers", row, problems);
    LbProvider p;
    c.SetKey(c.TextOr("uuid", "?"));
    p.uuid = c.Uuid("uuid");
    p.name = c.Text("name");
    p.requester = c.Text("requester");
    p.base_url = c.Text("base_url");
    p.api_keys = c.Strings("api_keys");
    p.times = c.Times();
    if (c.ok()) snap.providers.push_back(std::move(p));
  }
  for (const char* table : {"llm_models", "embedding_models"}) {
    const bool embedding = std::string_view(table) == "embedding_models";
    for (const auto& row : tables[table]) {
      Cells c(table, row, problems);
      LbModel m;
      m.embedding = embedding;
      c.SetKey(c.TextOr("uuid", "?"));
      m.uuid = c.Uuid("uuid");
      m.name = c.Text("name");
      m.provider_uuid = c.Text("provider_uuid");
      if (!embedding) m.abilities = c.Strings("abilities");
      m.extra_args = c.Object("extra_args");
      m.prefered_ranking = static_cast<int>(c.Int("prefered_ranking"));
      m.times = c.Times();
      if (c.ok()) snap.models.push_back(std::move(m));
    }
  }
  for (const auto& row : tables["legacy_pipelines"]) {
    Cells c("legacy_pipelines", row, problems);
    LbPipeline p;
    c.SetKey(c.TextOr("uuid", "?"));
    p.uuid = c.Uuid("uuid");
    p.name = c.Text("name");
    p.description = c.Text("description");
    p.emoji = c.TextOr("emoji", "");
    p.for_version = c.Text("for_version");
    p.is_default = c.Bool("is_default");
    p.stages = c.Array("stages");
    p.config = c.Object("config");
    p.extensions_preferences = c.Object("extensions_preferences");
    p.times = c.Times();
    if (c.ok()) snap.pipelines.push_back(std::move(p));
  }
  for (const auto& row : tables["bots"]) {
    Cells c("bots", row, problems);
    LbBot b;
    c.SetKey(c.TextOr("uuid", "?"));
    b.uuid = c.Uuid("uuid");
    b.name = c.Text("name");
    b.description = c.Text("description");
    b.adapter = c.Text("adapter");
    b.adapter_config = c.Object("adapter_config");
    b.enable = c.Bool("enable");
    b.use_pipeline_uuid = c.Optional("use_pipeline_uuid");
    if (b.use_pipeline_uuid && b.use_pipeline_uuid->empty()) b.use_pipeline_uuid.reset();
    b.times = c.Times();
    if (c.ok()) snap.bots.push_back(std::move(b));
  }
  for (const auto& row : tables["api_keys"]) {
    Cells c("api_keys", row, problems);
    LbApiKey k;
    c.SetKey("id " + c.TextOr("id", "?"));
    k.id = c.Int("id");
    k.name = c.Text("name");
    k.key = c.Text("key");
    k.description = c.TextOr("description", "");
    k.times = c.Times();
    if (c.ok()) snap.api_keys.push_back(std::move(k));
  }
  for (const auto& row : tables["plugin_settings"]) {
    Cells c("plugin_settings", row, problems);
    LbPluginSetting p;
    c.SetKey(c.TextOr("plugin_author", "?") + "/" + c.TextOr("plugin_name", "?"));
    p.author = c.Text("plugin_author");
    p.name = c.Text("plugin_name");
    p.enabled = c.Bool("enabled");
    p.priority = static_cast<int>(c.Int("priority"));
    p.config = c.Object("config");
    p.install_source = c.TextOr("install_source", "");
    if (c.ok()) snap.plugins.push_back(std::move(p));
  }
  for (const auto& row : tables["mcp_servers"]) {
    Cells c("mcp_servers", row, problems);
    LbMcpServer m;
    c.SetKey(c.TextOr("uuid", "?"));
    m.uuid = c.Uuid("uuid");
    m.name = c.Text("name");
    m.enable = c.Bool("enable");
    m.mode = c.Text("mode");
    m.extra_args = c.Object("extra_args");
    m.times = c.Times();
    if (c.ok()) snap.mcp_servers.push_back(std::move(m));
  }
  for (const auto& row : tables["knowledge_bases"]) {
    Cells c("knowledge_bases", row, problems);
    LbKnowledgeBase k;
    c.SetKey(c.TextOr("uuid", "?"));
    k.uuid = c.Text("uuid");
    k.name = c.TextOr("name", "");
    k.engine = c.TextOr("knowledge_engine_plugin_id", "");
    if (c.ok()) snap.knowledge_bases.push_back(std::move(k));
  }
  for (const auto& row : tables["webhooks"]) {
    Cells c("webhooks", row, problems);
    LbWebhook w;
    c.SetKey("id " + c.TextOr("id", "?"));
    w.id = c.Int("id");
    w.name = c.Text("name");
    w.url = c.Text("url");
    w.description = c.TextOr("description", "");
    w.enabled = c.Bool("enabled");
    if (c.ok()) snap.webhooks.push_back(std::move(w));
  }
  for (const auto& row : tables["users"]) {
    Cells c("users", row, problems);
    LbUser u;
    c.SetKey(c.TextOr("user", "?"));
    u.user = c.Text("user");
    u.password_hash = c.Text("password");
    u.account_type = c.TextOr("account_type", "local");
    if (c.ok()) snap.users.push_back(std::move(u));
  }
  return snap;
}

}  // namespace sb::langbot_import
