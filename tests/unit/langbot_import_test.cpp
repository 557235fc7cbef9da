// The LangBot import's pure parts: reading a LangBot database through the Source interface (an
// in-memory one here), its timestamps, and which config.yaml settings carry over.
#include <gtest/gtest.h>

#include <map>

#include "langbot_import/config_mapping.hpp"
#include "langbot_import/snapshot.hpp"

namespace sb::langbot_import {
namespace {

// Tables as a LangBot database would hand them over: every column as text or NULL.
class MemorySource final : public Source {
 public:
  std::map<std::string, std::vector<Row>> tables;
  std::map<std::string, std::vector<std::string>> columns;

  void AddTable(const std::string& name, std::vector<std::string> cols) {
    columns[name] = std::move(cols);
    tables[name];
  }

  std::string Describe() const override { return "memory"; }
  util::Result<std::optional<std::vector<std::string>>> Columns(const std::string& table) override {
    auto it = columns.find(table);
    if (it == columns.end()) return std::optional<std::vector<std::string>>();
    return std::optional<std::vector<std::string>>(it->second);
  }
  util::Result<std::vector<Row>> Rows(const std::string& table, const std::vector<std::string>&,
                                      std::size_t max_rows) override {
    if (tables[table].size() > max_rows) {
      return util::Fail(util::ErrorCode::kPayloadTooLarge, "too many");
    }
    return tables[table];
  }
};

// Every table ReadSnapshot reads, empty, at schema version `version`.
MemorySource LangbotShaped(const std::string& version) {
  MemorySource s;
  s.AddTable("metadata", {"key", "value"});
  s.tables["metadata"].push_back({{"key", "database_version"}, {"value", version}});
  s.AddTable("model_providers",
             {"uuid", "name", "requester", "base_url", "api_keys", "created_at", "updated_at"});
  s.AddTable("llm_models", {"uuid", "name", "provider_uuid", "abilities", "extra_args",
                            "prefered_ranking", "created_at", "updated_at"});
  s.AddTable("embedding_models", {"uuid", "name", "provider_uuid", "extra_args", "prefered_ranking",
                                  "created_at", "updated_at"});
  s.AddTable("legacy_pipelines",
             {"uuid", "name", "description", "emoji", "created_at", "updated_at", "for_version",
              "is_default", "stages", "config", "extensions_preferences"});
  s.AddTable("bots", {"uuid", "name", "description", "adapter", "adapter_config", "enable",
                      "use_pipeline_name", "use_pipeline_uuid", "created_at", "updated_at"});
  s.AddTable("api_keys", {"id", "name", "key", "description", "created_at", "updated_at"});
  s.AddTable("plugin_settings", {"plugin_author", "plugin_name", "enabled", "priority", "config",
                                 "install_source", "install_info"});
  s.AddTable("mcp_servers",
             {"uuid", "name", "enable", "mode", "extra_args", "created_at", "updated_at"});
  s.AddTable("knowledge_bases", {"uuid", "name", "knowledge_engine_plugin_id"});
  s.AddTable("webhooks", {"id", "name", "url", "description", "enabled"});
  s.AddTable("users", {"id", "user", "password", "account_type"});
  return s;
}

TEST(LangbotSnapshot, ReadsTypedRecordsWithBothBooleanSpellings) {
  auto s = LangbotShaped("24");
  s.tables["bots"].push_back({{"uuid", "9d4f8d84-8ea1-4eb1-a088-3eb16a4e5f01"},
                              {"name", "a"},
                              {"description", ""},
                              {"adapter", "telegram"},
                              {"adapter_config", R"({"token":"t"})"},
                              {"enable", "t"},  // PostgreSQL's spelling
                              {"use_pipeline_uuid", std::nullopt},
                              {"created_at", "2025-11-02 10:20:30.5"},
                              {"updated_at", std::nullopt}});
  s.tables["plugin_settings"].push_back({{"plugin_author", "x"},
                                         {"plugin_name", "y"},
                                         {"enabled", "0"},  // SQLite's
                                         {"priority", "3"},
                                         {"config", "{}"},
                                         {"install_source", "marketplace"}});
  auto snap = ReadSnapshot(s);
  ASSERT_TRUE(snap) << snap.error().message;
  ASSERT_EQ(snap->bots.size(), 1u);
  EXPECT_TRUE(snap->bots[0].enable);
  EXPECT_FALSE(snap->bots[0].use_pipeline_uuid);
  EXPECT_EQ(snap->bots[0].adapter_config.at("token").as_string(), "t");
  ASSERT_TRUE(snap->bots[0].times.created_at);
  EXPECT_EQ(util::ToUnixMillis(*snap->bots[0].times.created_at), 1762078830500);
  ASSERT_EQ(snap->plugins.size(), 1u);
  EXPECT_FALSE(snap->plugins[0].enabled);
  EXPECT_EQ(snap->plugins[0].priority, 3);
  EXPECT_TRUE(snap->problems.empty());
}

TEST(LangbotSnapshot, UnreadableRowsBecomeProblemsNamingTableKeyAndColumn) {
  auto s = LangbotShaped("24");
  s.tables["model_providers"].push_back({{"uuid", "not-a-uuid"},
                                         {"name", "p"},
                                         {"requester", "r"},
                                         {"base_url", "http://x"},
                                         {"api_keys", R"(["a", 5])"}});
  s.tables["legacy_pipelines"].push_back({{"uuid", "8c3e7c73-7d90-4da0-9f77-2da05f3d4e01"},
                                          {"name", "p"},
                                          {"description", ""},
                                          {"for_version", "v4.9.5"},
                                          {"is_default", "maybe"},
                                          {"stages", "[]"},
                                          {"config", "[]"},
                                          {"extensions_preferences", "{"}});
  auto snap = ReadSnapshot(s);
  ASSERT_TRUE(snap);
  EXPECT_TRUE(snap->providers.empty());
  EXPECT_TRUE(snap->pipelines.empty());
  std::vector<std::string> seen;
  for (const auto& p : snap->problems) seen.push_back(p.table + " " + p.key + ": " + p.message);
  ASSERT_EQ(seen.size(), 5u) << ::testing::PrintToString(seen);
  EXPECT_EQ(seen[0], "model_providers not-a-uuid: uuid 'not-a-uuid' is not a UUID");
  EXPECT_EQ(seen[1], "model_providers not-a-uuid: api_keys holds a JSON integer, not only strings");
  EXPECT_NE(seen[2].find("is_default 'maybe' is not a boolean"), std::string::npos);
  EXPECT_NE(seen[3].find("config is JSON array, not an object"), std::string::npos);
  EXPECT_NE(seen[4].find("extensions_preferences is not valid JSON"), std::string::npos);
}

TEST(LangbotSnapshot, RefusesOtherSchemaVersionsAndForeignDatabases) {
  for (const char* version : {"23", "25", "x"}) {
    auto s = LangbotShaped(version);
    auto snap = ReadSnapshot(s);
    ASSERT_FALSE(snap) << version;
    EXPECT_EQ(snap.error().code, util::ErrorCode::kInvalidArgument);
  }
  MemorySource foreign;
  foreign.AddTable("notes", {"id", "text"});
  auto snap = ReadSnapshot(foreign);
  ASSERT_FALSE(snap);
  EXPECT_NE(snap.error().message.find("is not a LangBot database"), std::string::npos);

  auto missing_column = LangbotShaped("24");
  missing_column.columns["bots"].pop_back();
  snap = ReadSnapshot(missing_column);
  ASSERT_FALSE(snap);
  EXPECT_NE(snap.error().message.find("table 'bots' has no column 'updated_at'"),
            std::string::npos);
}

TEST(LangbotSnapshot, ParsesSqliteAndPostgresTimestamps) {
  EXPECT_EQ(util::ToUnixMillis(*ParseLangbotTime("2025-11-02 10:20:30")), 1762078830000);
  EXPECT_EQ(util::ToUnixMillis(*ParseLangbotTime("2025-11-02T10:20:30.123456+00:00")),
            1762078830123);
  EXPECT_FALSE(ParseLangbotTime("2025-11-02 10:20:30+02:00"));
  EXPECT_FALSE(ParseLangbotTime("yesterday"));
}

TEST(LangbotConfigMapping, TakesOnlyWhatLangbotChangedFromItsDefaults) {
  config::Config current;
  current.auth.jwt_expire_seconds = 3600;  // set here by hand
  auto mapping = MapLangbotConfig(R"(
api: {port: 5300, webhook_prefix: 'https://bots.example.org'}
concurrency: {pipeline: 20, session: 1}
proxy: {http: 'http://proxy:3128', https: 'http://user:pw@proxy:3129'}
system: {jwt: {expire: 86400, secret: 'x'}}
monitoring: {auto_cleanup: {retention_days: 'many'}}
admins: []
)",
                                  current);
  ASSERT_TRUE(mapping) << mapping.error().message;
  std::map<std::string, const ConfigSetting*> by_key;
  for (const auto& s : mapping->settings) by_key[s.langbot_key] = &s;
  // LangBot's own defaults (port 5300, 20 pipelines) never replace ours.
  EXPECT_FALSE(by_key.count("api.port"));
  EXPECT_FALSE(by_key.count("concurrency.pipeline"));
  ASSERT_TRUE(by_key.count("api.webhook_prefix"));
  EXPECT_TRUE(by_key["api.webhook_prefix"]->current_is_default);
  ASSERT_TRUE(by_key.count("system.jwt.expire"));
  EXPECT_EQ(by_key["system.jwt.expire"]->value, "86400");
  EXPECT_EQ(by_key["system.jwt.expire"]->current, "3600");
  EXPECT_FALSE(by_key["system.jwt.expire"]->current_is_default);
  ASSERT_TRUE(by_key.count("proxy.https"));
  EXPECT_TRUE(by_key["proxy.https"]->secret);
  config::Config applied;
  by_key["proxy.https"]->apply(applied);
  EXPECT_EQ(applied.network.proxy, "http://user:pw@proxy:3129");

  std::map<std::string, std::string> skipped;
  for (const auto& s : mapping->skipped) skipped[s.langbot_key] = s.reason;
  EXPECT_TRUE(skipped.count("proxy.http"));  // one proxy here; https won
  EXPECT_EQ(skipped["monitoring.auto_cleanup.retention_days"],
            "its value is not of the expected type");
  EXPECT_TRUE(skipped.count("system.jwt.secret"));
  EXPECT_TRUE(skipped.count("concurrency.session"));
  EXPECT_FALSE(skipped.count("admins"));  // empty: nothing lost
}

TEST(LangbotConfigMapping, RejectsWhatIsNotAYamlMapping) {
  EXPECT_FALSE(MapLangbotConfig("[1, 2]", config::Config{}));
  EXPECT_FALSE(MapLangbotConfig("a: [", config::Config{}));
}

}  // namespace
}  // namespace sb::langbot_import
