#include "config/config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace sb::config
