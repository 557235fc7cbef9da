#include "plugins/github_client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <cctype>
#include <cstring>
#include <ctime>
#include <limits>
#include <optional>

#include "net/http_client.hpp"
#include "plugins/blocking_http.hpp"

namespace sb::plugins {
namespace {

using util::ErrorCode;

bool AllOf(std::string_view s, const char* extra) {
  return std::all_of(s.begin(), s.end(), [extra](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           (c != '\0' && std::strchr(extra, c) != nullptr);
  });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::int64_t> IntOf(const util::Json* v) {
  if (!v) return std::nullopt;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64() &&
      v->as_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return static_cast<std::int64_t>(v->as_uint64());
  }
  return std::nullopt;
}

std::optional<std::string> StringOf(const util::Json* v) {
  if (!v || !v->is_string()) return std::nullopt;
  return std::string(v->as_string());
}

util::Error Malformed(const char* what) {
  return {ErrorCode::kUpstreamFailed,
          fmt::format("GitHub answered with {} that is not the documented shape", what)};
}

// scheme://host:port, with the default port filled in; empty when `url` is not an absolute
// http(s) URL without user info.
struct Origin {
  std::string scheme;
  std::string host;
  std::string port;
};

std::optional<Origin> OriginOf(std::string_view text) {
  auto url = boost::urls::parse_absolute_uri(text);
  if (!url || url->has_userinfo()) return std::nullopt;
  Origin o;
  o.scheme = Lower(url->scheme());
  if (o.scheme != "http" && o.scheme != "https") return std::nullopt;
  o.host = Lower(url->encoded_host());
  if (o.host.empty()) return std::nullopt;
  o.port = url->has_port() ? std::string(url->port()) : "";
  if (o.port.empty()) o.port = o.scheme == "https" ? "443" : "80";
  return o;
}

bool GithubHost(std::string_view host) {
  constexpr std::string_view kContent = ".githubusercontent.com";
  return host == "github.com" || host == "api.github.com" ||
         (host.size() > kContent.size() && host.ends_with(kContent));
}

// GitHub's JSON error message, cut short, when it gave one.
std::string MessageOf(const net::HttpResponse& res) {
  auto parsed = util::ParseJson(res.body);
  if (parsed && parsed->is_object()) {
    if (auto m = StringOf(parsed->as_object().if_contains("message"))) return m->substr(0, 200);
  }
  return {};
}

util::Error StatusError(const net::HttpResponse& res, const std::string& what) {
  const bool spent = res.Header("x-ratelimit-remaining") == "0";
  if (res.status == 429 || (res.status == 403 && spent)) {
    std::string when = "later";
    std::int64_t reset = 0;
    const auto header = res.Header("x-ratelimit-reset");
    if (!header.empty() &&
        std::all_of(header.begin(), header.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        header.size() < 12) {
      reset = std::stoll(std::string(header));
      std::time_t t = static_cast<std::time_t>(reset);
      std::tm tm{};
      gmtime_r(&t, &tm);
      char buf[32];
      std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
      when = std::string("at ") + buf;
    }
    return {ErrorCode::kUpstreamRateLimited,
            fmt::format("GitHub's API rate limit for this server is spent ({}); try again {}", what,
                        when)};
  }
  if (res.status == 404) return {ErrorCode::kNotFound, fmt::format("GitHub: {} not found", what)};
  const std::string message = MessageOf(res);
  return {ErrorCode::kUpstreamFailed,
          fmt::format("GitHub refused {} (HTTP {}{}{})", what, res.status,
                      message.empty() ? "" : ": ", message)};
}

}  // namespace

bool ValidGithubOwner(std::string_view owner) {
  return !owner.empty() && owner.size() <= 39 && AllOf(owner, "-");
}

bool ValidGithubRepo(std::string_view repo) {
  return !repo.empty() && repo.size() <= 100 && repo != "." && repo != ".." && AllOf(repo, "._-");
}

util::Result<GithubRepoRef> ParseGithubRepoUrl(std::string_view url) {
  const auto bad = [] {
    return util::Fail(ErrorCode::kInvalidArgument, "Invalid GitHub repository URL");
  };
  constexpr std::string_view kHost = "github.com/";
  const auto at = url.find(kHost);
  if (at == std::string_view::npos) return bad();
  std::string_view rest = url.substr(at + kHost.size());
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) return bad();
  GithubRepoRef ref{std::string(rest.substr(0, slash)), ""};
  rest.remove_prefix(slash + 1);
  std::string_view repo = rest.substr(0, rest.find('/'));
  if (repo.size() > 4 && repo.ends_with(".git")) repo.remove_suffix(4);
  ref.repo = std::string(repo);
  if (!ValidGithubOwner(ref.owner) || !ValidGithubRepo(ref.repo)) return bad();
  return ref;
}

util::Result<std::vector<domain::GithubRelease>> ParseGithubReleases(const util::Json& json) {
  if (!json.is_array()) return tl::unexpected(Malformed("a release list"));
  std::vector<domain::GithubRelease> out;
  for (const auto& item : json.as_array()) {
    const auto* o = item.if_object();
    if (!o) return tl::unexpected(Malformed("a release"));
    domain::GithubRelease r;
    auto id = IntOf(o->if_contains("id"));
    auto tag = StringOf(o->if_contains("tag_name"));
    if (!id || !tag) return tl::unexpected(Malformed("a release"));
    r.id = *id;
    r.tag_name = std::move(*tag);
    r.name = StringOf(o->if_contains("name"));
    r.published_at = StringOf(o->if_contains("published_at"));
    const auto* pre = o->if_contains("prerelease");
    const auto* draft = o->if_contains("draft");
    r.prerelease = pre && pre->is_bool() && pre->as_bool();
    r.draft = draft && draft->is_bool() && draft->as_bool();
    out.push_back(std::move(r));
  }
  return out;
}

util::Result<std::vector<domain::GithubAsset>> ParseGithubAssets(const util::Json& json) {
  const auto* release = json.if_object();
  const auto* assets = release ? release->if_contains("assets") : nullptr;
  if (!assets || !assets->is_array()) return tl::unexpected(Malformed("a release"));
  std::vector<domain::GithubAsset> out;
  for (const auto& item : assets->as_array()) {
    const auto* o = item.if_object();
    if (!o) return tl::unexpected(Malformed("an asset"));
    domain::GithubAsset a;
    auto id = IntOf(o->if_contains("id"));
    auto name = StringOf(o->if_contains("name"));
    auto url = StringOf(o->if_contains("browser_download_url"));
    if (!id || !name || !url) return tl::unexpected(Malformed("an asset"));
    a.id = *id;
    a.name = std::move(*name);
    a.download_url = std::move(*url);
    a.size = IntOf(o->if_contains("size")).value_or(0);
    a.content_type = StringOf(o->if_contains("content_type")).value_or("");
    out.push_back(std::move(a));
  }
  return out;
}

util::Result<void> AllowedDownloadUrl(std::string_view url, std::string_view api_url) {
  auto origin = OriginOf(url);
  if (!origin) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "asset_url must be an absolute http(s) URL without user info");
  }
  if (auto api = OriginOf(api_url); api && api->scheme == origin->scheme &&
                                    api->host == origin->host && api->port == origin->port) {
    return util::Ok();
  }
  if (origin->scheme == "https" && origin->port == "443" && GithubHost(origin->host)) {
    return util::Ok();
  }
  return util::Fail(ErrorCode::kInvalidArgument,
                    fmt::format("only GitHub's hosts (https on github.com, api.github.com, "
                                "*.githubusercontent.com) or the configured GitHub API base are "
                                "downloaded from, not {}://{}:{}",
                                origin->scheme, origin->host.substr(0, 100), origin->port));
}

GithubClient::GithubClient(std::shared_ptr<net::HttpClient> http,
                           boost::asio::any_io_executor executor, GithubOptions options)
    : http_(std::move(http)), executor_(std::move(executor)), options_(std::move(options)) {
  while (!options_.api_url.empty() && options_.api_url.back() == '/') options_.api_url.pop_back();
}

util::Result<util::Json> GithubClient::GetJson(const std::string& path, const std::string& what) {
  net::HttpRequest req;
  req.url = options_.api_url + path;
  req.headers.emplace_back("Accept", "application/vnd.github+json");
  req.headers.emplace_back("X-GitHub-Api-Version", "2022-11-28");
  req.timeouts = {options_.connect_timeout, options_.api_timeout, options_.idle_timeout};
  req.max_response_bytes = options_.max_api_bytes;
  auto res = SendAndWait(*http_, executor_, std::move(req), nullptr, "GitHub");
  if (!res) {
    util::Error e = res.error();
    e.message = fmt::format("GitHub could not be asked for {}: {}", what, e.message);
    return tl::unexpected(std::move(e));
  }
  if (res->status / 100 != 2) return tl::unexpected(StatusError(*res, what));
  auto parsed = util::ParseJson(res->body);
  if (!parsed) return tl::unexpected(Malformed("something"));
  return std::move(*parsed);
}

util::Result<std::vector<domain::GithubRelease>> GithubClient::Releases(const std::string& owner,
                                                                        const std::string& repo) {
  if (!ValidGithubOwner(owner) || !ValidGithubRepo(repo)) {
    return util::Fail(ErrorCode::kInvalidArgument, "owner or repo is not a GitHub name");
  }
  auto json = GetJson(fmt::format("/repos/{}/{}/releases?per_page=100", owner, repo),
                      fmt::format("the releases of {}/{}", owner, repo));
  if (!json) return tl::unexpected(json.error());
  return ParseGithubReleases(*json);
}

util::Result<std::vector<domain::GithubAsset>> GithubClient::ReleaseAssets(
    const std::string& owner, const std::string& repo, std::int64_t release_id) {
  if (!ValidGithubOwner(owner) || !ValidGithubRepo(repo)) {
    return util::Fail(ErrorCode::kInvalidArgument, "owner or repo is not a GitHub name");
  }
  if (release_id <= 0) {
    return util::Fail(ErrorCode::kInvalidArgument, "release_id must be a positive integer");
  }
  auto json = GetJson(fmt::format("/repos/{}/{}/releases/{}", owner, repo, release_id),
                      fmt::format("release {} of {}/{}", release_id, owner, repo));
  if (!json) return tl::unexpected(json.error());
  return ParseGithubAssets(*json);
}

util::Result<std::string> GithubClient::Download(const std::string& url,
                                                 std::function<void(std::uint64_t)> progress) {
  std::string current = url;
  for (int hop = 0; hop <= options_.max_redirects; ++hop) {
    if (auto ok = AllowedDownloadUrl(current, options_.api_url); !ok) {
      return tl::unexpected(ok.error());
    }
    net::HttpRequest req;
    req.url = current;
    // GitHub's API asset URL answers with the bytes (or a redirect to them) only when asked so.
    req.headers.emplace_back("Accept", "application/octet-stream");
    req.timeouts = {options_.connect_timeout, options_.download_timeout, options_.idle_timeout};
    req.max_response_bytes = options_.max_package_bytes;
    std::string body;
    std::uint64_t reported = 0;
    auto sink = [&](std::string_view piece) {
      body.append(piece);
      // Progress every 64 KiB: enough for a task's bar, few enough to cost nothing.
      if (progress && body.size() - reported >= 64 * 1024) {
        reported = body.size();
        progress(reported);
      }
      return true;
    };
    auto res = SendAndWait(*http_, executor_, std::move(req), sink, "GitHub");
    if (!res) {
      if (res.error().message.find("larger than") != std::string::npos) {
        return util::Fail(
            ErrorCode::kPayloadTooLarge,
            fmt::format("the package is larger than {} bytes", options_.max_package_bytes));
      }
      util::Error e = res.error();
      e.message = "download failed: " + e.message;
      return tl::unexpected(std::move(e));
    }
    if (res->status == 301 || res->status == 302 || res->status == 303 || res->status == 307 ||
        res->status == 308) {
      const auto location = res->Header("location");
      auto ref = boost::urls::parse_uri_reference(location);
      boost::urls::url next(current);
      if (location.empty() || !ref || !next.resolve(*ref)) {
        return util::Fail(ErrorCode::kUpstreamFailed,
                          "download failed: a redirect without a usable Location");
      }
      current = std::string(next.buffer());
      continue;
    }
    if (res->status == 404) {
      return util::Fail(ErrorCode::kNotFound, "download failed: GitHub has no such asset");
    }
    if (res->status / 100 != 2) {
      return tl::unexpected(StatusError(*res, "the download"));
    }
    if (progress) progress(body.size());
    return body;
  }
  return util::Fail(ErrorCode::kUpstreamFailed,
                    fmt::format("download failed: more than {} redirects", options_.max_redirects));
}

}  // namespace sb::plugins
