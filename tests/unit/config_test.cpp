#include "config/config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "util/crypto.hpp"

namespace sb::config {
namespace {

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() / ("sb-cfg-" + util::RandomUrlSafe(8));
  }
  void TearDown() override { std::filesystem::remove(path_); }
  void Write(const std::string& text) { std::ofstream(path_) << text; }
  std::filesystem::path path_;
};

TEST_F(ConfigTest, MissingFileGivesDefaults) {
  auto c = LoadConfig(path_.string(), {});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->api.port, 5300);
  EXPECT_EQ(c->api.host, "0.0.0.0");
  EXPECT_EQ(c->api.body_limit_bytes, 10u * 1024 * 1024);
  EXPECT_EQ(c->space.url, "https://space.langbot.app");
  EXPECT_EQ(c->api.max_connections_per_address, 256);
  EXPECT_EQ(c->auth.max_concurrent_hashes, 0);  // half the cores
  EXPECT_EQ(c->auth.login_rate_per_second, 10);
  EXPECT_EQ(c->runtime.conversation_cache_bytes, 32u * 1024 * 1024);
}

TEST_F(ConfigTest, FloodLimitsAreReadAndChecked) {
  auto c = LoadConfig(path_.string(), {{"API__MAX_CONNECTIONS_PER_ADDRESS", "8"},
                                       {"AUTH__MAX_CONCURRENT_HASHES", "2"},
                                       {"AUTH__LOGIN_RATE_PER_SECOND", "3"},
                                       {"RUNTIME__CONVERSATION_CACHE_BYTES", "2097152"}});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->api.max_connections_per_address, 8);
  EXPECT_EQ(c->auth.max_concurrent_hashes, 2);
  EXPECT_EQ(c->auth.login_rate_per_second, 3);
  EXPECT_EQ(c->runtime.conversation_cache_bytes, 2097152u);
  for (const auto& [key, name] : std::vector<std::pair<std::string, std::string>>{
           {"AUTH__LOGIN_RATE_PER_SECOND", "auth.login_rate_per_second"},
           {"AUTH__MAX_CONCURRENT_HASHES", "auth.max_concurrent_hashes"},
           {"API__MAX_CONNECTIONS_PER_ADDRESS", "api.max_connections_per_address"}}) {
    auto bad = LoadConfig(path_.string(), {{key, "-1"}});
    ASSERT_FALSE(bad) << key;
    EXPECT_NE(bad.error().message.find(name), std::string::npos) << bad.error().message;
  }
  auto tiny = LoadConfig(path_.string(), {{"RUNTIME__CONVERSATION_CACHE_BYTES", "1000"}});
  ASSERT_FALSE(tiny);
  EXPECT_NE(tiny.error().message.find("runtime.conversation_cache_bytes"), std::string::npos);
}

TEST_F(ConfigTest, RenderedDefaultsReadBackTheSame) {
  Write(RenderConfig(Config{}));
  auto c = LoadConfig(path_.string(), {});
  ASSERT_TRUE(c);
  EXPECT_EQ(RenderConfig(*c), RenderConfig(Config{}));
}

TEST_F(ConfigTest, EnvironmentOverridesTheFile) {
  Write("api:\n  port: 8000\nspace:\n  url: http://file\n");
  auto c = LoadConfig(path_.string(), {{"API__PORT", "9000"},
                                       {"SPACE__URL", "http://env"},
                                       {"API__CORS_ALLOW_ORIGINS", "http://a,http://b"},
                                       {"UNRELATED", "x"},
                                       {"NOSECTION__KEY", "y"}});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->api.port, 9000);
  EXPECT_EQ(c->space.url, "http://env");
  EXPECT_EQ(c->api.cors_allow_origins, (std::vector<std::string>{"http://a", "http://b"}));
}

TEST_F(ConfigTest, WrongTypesAndRangesNameTheKey) {
  auto c = LoadConfig(path_.string(), {{"API__PORT", "eighty"}});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, util::ErrorCode::kInvalidArgument);
  EXPECT_NE(c.error().message.find("api.port"), std::string::npos);
  c = LoadConfig(path_.string(), {{"API__PORT", "70000"}});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("api.port"), std::string::npos);
  Write("api: [1, 2\n");
  c = LoadConfig(path_.string(), {});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("not valid YAML"), std::string::npos);
}

TEST_F(ConfigTest, AnonymousDebugChatTakesLoopbackAndOriginsOnly) {
  auto c = LoadConfig(path_.string(), {{"API__ANONYMOUS_DEBUG_CHAT",
                                        "loopback,https://console.example,http://10.0.0.5:8080"}});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(
      c->api.anonymous_debug_chat,
      (std::vector<std::string>{"loopback", "https://console.example", "http://10.0.0.5:8080"}));
  EXPECT_TRUE(Config{}.api.anonymous_debug_chat.empty());  // off unless asked for
  for (const char* bad : {"*", "console.example", "https://console.example/chat",
                          "https://user@console.example", "ftp://console.example", "https://"}) {
    auto r = LoadConfig(path_.string(), {{"API__ANONYMOUS_DEBUG_CHAT", bad}});
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("api.anonymous_debug_chat"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace sb::config
