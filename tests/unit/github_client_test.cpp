// The I/O-free parts of installing plugins from GitHub: LangBot's repository URL rule, the SSRF
// rule for asset downloads, and GitHub's documented release JSON; and the package asset reader.
#include "plugins/github_client.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "plugins/package.hpp"
#include "util/ids.hpp"

namespace sb::plugins {
namespace {

namespace fs = std::filesystem;
using util::ErrorCode;

TEST(GithubRepoUrl, TakesLangBotsFormsAndRefusesOthers) {
  for (const char* url : {"https://github.com/alice/echo", "github.com/alice/echo",
                          "https://github.com/alice/echo.git", "http://github.com/alice/echo/",
                          "https://github.com/alice/echo/releases/tag/v1.0.0"}) {
    auto ref = ParseGithubRepoUrl(url);
    ASSERT_TRUE(ref) << url;
    EXPECT_EQ(ref->owner, "alice") << url;
    EXPECT_EQ(ref->repo, "echo") << url;
  }
  auto dotted = ParseGithubRepoUrl("https://github.com/a-b/my.plugin_x.git");
  ASSERT_TRUE(dotted);
  EXPECT_EQ(dotted->repo, "my.plugin_x");
  for (const char* url :
       {"", "https://gitlab.com/alice/echo", "https://github.com/alice", "https://github.com//echo",
        "https://github.com/al ice/echo", "https://github.com/alice/..",
        "https://github.com/alice/echo?x=1", "https://github.com/../../etc/passwd"}) {
    auto ref = ParseGithubRepoUrl(url);
    ASSERT_FALSE(ref) << url;
    EXPECT_EQ(ref.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(ref.error().message, "Invalid GitHub repository URL");
  }
  EXPECT_FALSE(ValidGithubOwner(std::string(40, 'a')));
  EXPECT_FALSE(ValidGithubOwner(std::string("a\0b", 3)));
  EXPECT_FALSE(ValidGithubRepo(std::string("a\0b", 3)));
  EXPECT_TRUE(ValidGithubOwner(std::string(39, 'a')));
}

TEST(GithubDownloadUrl, OnlyGithubHostsOrTheConfiguredBase) {
  const std::string api = "https://api.github.com";
  for (const char* ok :
       {"https://github.com/a/b/releases/download/v1/p.zip",
        "https://api.github.com/repos/a/b/releases/assets/1",
        "https://objects.githubusercontent.com/x?X-Amz-Signature=s",
        "https://release-assets.githubusercontent.com/x", "https://GitHub.com:443/a/b"}) {
    EXPECT_TRUE(AllowedDownloadUrl(ok, api)) << ok;
  }
  for (const char* bad : {"http://github.com/a/b", "https://github.com:8443/a/b",
                          "https://evil.example/github.com/a/b", "https://github.com.evil.example/",
                          "https://githubusercontent.com/x", "https://user:pw@github.com/a/b",
                          "ftp://github.com/a", "file:///etc/passwd", "/relative/path",
                          "http://127.0.0.1:5300/api/v1/system/info", "http://169.254.169.254/"}) {
    auto r = AllowedDownloadUrl(bad, api);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  // A configured base (a GitHub Enterprise server, a test fake): its exact origin, http too.
  const std::string fake = "http://127.0.0.1:4000/";
  EXPECT_TRUE(AllowedDownloadUrl("http://127.0.0.1:4000/a/b/releases/download/v1/p.zip", fake));
  EXPECT_FALSE(AllowedDownloadUrl("http://127.0.0.1:4001/x", fake));
  EXPECT_FALSE(AllowedDownloadUrl("https://127.0.0.1:4000/x", fake));
  EXPECT_FALSE(AllowedDownloadUrl("http://localhost:4000/x", fake));
  // The message names the host, never the query of a signed URL.
  auto r = AllowedDownloadUrl("https://evil.example/x?X-Amz-Signature=topsecret", api);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("evil.example"), std::string::npos);
  EXPECT_EQ(r.error().message.find("topsecret"), std::string::npos);
}

// Shaped as the "List releases" and "Get a release" examples of GitHub's REST documentation.
TEST(GithubJson, ReleasesAndAssetsFromTheDocumentedShape) {
  auto list = util::ParseJson(R"([
    {"url": "https://api.github.com/repos/octocat/Hello-World/releases/1", "id": 1,
     "tag_name": "v1.0.0", "name": "v1.0.0", "draft": false, "prerelease": false,
     "published_at": "2013-02-27T19:35:32Z", "assets": []},
    {"id": 2, "tag_name": "v1.1.0-rc1", "name": null, "draft": true, "prerelease": true,
     "published_at": null, "assets": []}])");
  ASSERT_TRUE(list);
  auto releases = ParseGithubReleases(*list);
  ASSERT_TRUE(releases) << releases.error().message;
  ASSERT_EQ(releases->size(), 2u);
  EXPECT_EQ((*releases)[0].id, 1);
  EXPECT_EQ((*releases)[0].name, "v1.0.0");
  EXPECT_EQ((*releases)[0].published_at, "2013-02-27T19:35:32Z");
  EXPECT_FALSE((*releases)[1].name);
  EXPECT_FALSE((*releases)[1].published_at);
  EXPECT_TRUE((*releases)[1].draft);
  EXPECT_TRUE((*releases)[1].prerelease);

  auto release = util::ParseJson(R"({"id": 1, "tag_name": "v1.0.0", "assets": [
    {"url": "https://api.github.com/repos/octocat/Hello-World/releases/assets/1",
     "browser_download_url": "https://github.com/octocat/Hello-World/releases/download/v1.0.0/example.zip",
     "id": 1, "name": "example.zip", "label": "short description", "state": "uploaded",
     "content_type": "application/zip", "size": 1024, "download_count": 42}]})");
  ASSERT_TRUE(release);
  auto assets = ParseGithubAssets(*release);
  ASSERT_TRUE(assets) << assets.error().message;
  ASSERT_EQ(assets->size(), 1u);
  EXPECT_EQ((*assets)[0].name, "example.zip");
  EXPECT_EQ((*assets)[0].size, 1024);
  EXPECT_EQ((*assets)[0].content_type, "application/zip");
  EXPECT_EQ((*assets)[0].download_url,
            "https://github.com/octocat/Hello-World/releases/download/v1.0.0/example.zip");

  for (const char* bad :
       {R"({"message": "Not Found"})", R"([{"id": "x", "tag_name": "v"}])", R"([1])"}) {
    auto json = util::ParseJson(bad);
    ASSERT_TRUE(json);
    auto r = ParseGithubReleases(*json);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kUpstreamFailed);
  }
  auto no_assets = util::ParseJson(R"([])");
  EXPECT_FALSE(ParseGithubAssets(*no_assets));
}

class PackageAssetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sb-assets-" + util::NewUuid());
    fs::create_directories(dir_ / "assets");
    Write(dir_ / "assets" / "logo.svg", "<svg/>");
    Write(dir_ / "secret.txt", "secret");
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void Write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  fs::path dir_;
};

TEST_F(PackageAssetTest, ReadsOneNameInAssetsAndNothingElse) {
  auto svg = ReadPackageAsset(dir_, "logo.svg", 1024);
  ASSERT_TRUE(svg);
  EXPECT_EQ(*svg, "<svg/>");
  for (const char* name :
       {"", ".", "..", "../secret.txt", "a/b", "..\\secret.txt", "missing", "logo.svg\n"}) {
    auto r = ReadPackageAsset(dir_, name, 1024);
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().code, ErrorCode::kNotFound) << name;
  }
  auto big = ReadPackageAsset(dir_, "logo.svg", 3);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, ErrorCode::kPayloadTooLarge);
  // Links: a file link in assets/, and assets/ itself a link into the package.
  fs::create_symlink(dir_ / "secret.txt", dir_ / "assets" / "leak.txt");
  EXPECT_FALSE(ReadPackageAsset(dir_, "leak.txt", 1024));
  fs::remove_all(dir_ / "assets");
  fs::create_directory_symlink(dir_, dir_ / "assets");
  EXPECT_FALSE(ReadPackageAsset(dir_, "secret.txt", 1024));
}

}  // namespace
}  // namespace sb::plugins
