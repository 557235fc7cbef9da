// GitHub's REST API for installing plugins from release assets, as LangBot does: a repository's
// releases, one release's assets, and the download of an asset. The server never fetches a URL
// a client chose unless it is on GitHub's own hosts or the configured API base (the SSRF rule of
// AllowedDownloadUrl), redirects included. Blocking calls, for handlers and background tasks on
// the blocking pool; the HTTP itself runs on the I/O context.
//   GithubClient github(http, io.get_executor(), {.api_url = "https://api.github.com"});
//   auto repo = ParseGithubRepoUrl("https://github.com/alice/echo.git");   // {alice, echo}
//   auto list = github.Releases(repo->owner, repo->repo);
//   auto zip = github.Download(asset.download_url, progress);
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "domain/plugin.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::net {
class HttpClient;
}

namespace sb::plugins {

struct GithubRepoRef {
  std::string owner;
  std::string repo;
};

// LangBot's rule: "github.com/<owner>/<repo>" anywhere in the text, an optional ".git" and any
// path after it. Owner and repository must then be GitHub-shaped names (owner: letters, digits
// and '-', at most 39; repository: letters, digits, '.', '_', '-', at most 100, not "." or "..").
// kInvalidArgument "Invalid GitHub repository URL" otherwise.
util::Result<GithubRepoRef> ParseGithubRepoUrl(std::string_view url);
bool ValidGithubOwner(std::string_view owner);
bool ValidGithubRepo(std::string_view repo);

// The fields LangBot's console shows, from GitHub's JSON (I/O-free, for tests).
// kUpstreamFailed when the JSON is not the documented shape.
util::Result<std::vector<domain::GithubRelease>> ParseGithubReleases(const util::Json& json);
util::Result<std::vector<domain::GithubAsset>> ParseGithubAssets(const util::Json& json);

// The SSRF rule for an asset URL and every redirect of its download: an absolute http(s) URL
// without user info that is either https on github.com, api.github.com or a
// *.githubusercontent.com host (default port), or on exactly the scheme, host and port of
// `api_url` (a GitHub Enterprise server, or a test fake). kInvalidArgument saying so otherwise;
// the message names the host, never the query (signed URLs carry tokens there).
util::Result<void> AllowedDownloadUrl(std::string_view url, std::string_view api_url);

struct GithubOptions {
  std::string api_url = "https://api.github.com";
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds api_timeout{20'000};
  std::chrono::milliseconds download_timeout{300'000};
  std::chrono::milliseconds idle_timeout{30'000};  // longest silence within a download
  std::uint64_t max_package_bytes = 50ull << 20;
  std::size_t max_api_bytes = 8 << 20;  // 100 releases with long notes fit
  int max_redirects = 5;
};

class GithubClient {
 public:
  GithubClient(std::shared_ptr<net::HttpClient> http, boost::asio::any_io_executor executor,
               GithubOptions options);

  // The first 100 releases, newest first. kNotFound for an unknown repository,
  // kUpstreamRateLimited when GitHub's rate limit is spent (the message says when it resets),
  // kUpstreamFailed for any other failure.
  util::Result<std::vector<domain::GithubRelease>> Releases(const std::string& owner,
                                                            const std::string& repo);
  // The same errors; kNotFound also for an unknown release.
  util::Result<std::vector<domain::GithubAsset>> ReleaseAssets(const std::string& owner,
                                                               const std::string& repo,
                                                               std::int64_t release_id);
  // The asset's bytes, following at most max_redirects redirects, each one checked by
  // AllowedDownloadUrl. kInvalidArgument for a refused URL, kPayloadTooLarge over
  // max_package_bytes, kNotFound for a 404, kUpstream* otherwise. `progress` (may be null) gets
  // the bytes received so far now and then.
  util::Result<std::string> Download(const std::string& url,
                                     std::function<void(std::uint64_t)> progress);

  const std::string& api_url() const { return options_.api_url; }

 private:
  util::Result<util::Json> GetJson(const std::string& path, const std::string& what);

  std::shared_ptr<net::HttpClient> http_;
  boost::asio::any_io_executor executor_;
  GithubOptions options_;
};

}  // namespace sb::plugins
