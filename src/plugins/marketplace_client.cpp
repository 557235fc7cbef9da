#include "plugins/marketplace_client.hpp"

#include <fmt/format.h>

#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include "net/http_client.hpp"
#include "plugins/blocking_http.hpp"
#include "plugins/manifest.hpp"

namespace sb::plugins {
namespace {

namespace asio = boost::asio;
using util::ErrorCode;

std::string Segment(const std::string& s) {
  return boost::urls::encode(s, boost::urls::unreserved_chars);
}

// The marketplace's own words, when it gave any, else the status.
std::string Explain(const net::HttpResponse& res) {
  auto parsed = util::ParseJson(res.body);
  if (parsed && parsed->is_object()) {
    if (const auto* msg = parsed->as_object().if_contains("msg"); msg && msg->is_string()) {
      return fmt::format("HTTP {}: {}", res.status,
                         std::string_view(msg->as_string()).substr(0, 200));
    }
  }
  return fmt::format("HTTP {}", res.status);
}

}  // namespace

MarketplaceClient::MarketplaceClient(std::shared_ptr<net::HttpClient> http,
                                     asio::any_io_executor executor, std::string base_url,
                                     MarketplaceOptions options)
    : http_(std::move(http)),
      executor_(std::move(executor)),
      base_url_(std::move(base_url)),
      options_(options) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
}

namespace {

util::Result<util::JsonObject> DataOf(const net::HttpResponse& res) {
  auto parsed = util::ParseJson(res.body);
  if (!parsed || !parsed->is_object()) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      "the marketplace answered with something that is not JSON");
  }
  const auto* data = parsed->as_object().if_contains("data");
  if (!data || !data->is_object()) {
    return util::Fail(ErrorCode::kUpstreamFailed, "the marketplace's answer has no data");
  }
  return data->as_object();
}

}  // namespace

util::Result<MarketplacePlugin> MarketplaceClient::Info(const std::string& author,
                                                        const std::string& name) {
  net::HttpRequest req;
  req.url =
      fmt::format("{}/api/v1/marketplace/plugins/{}/{}", base_url_, Segment(author), Segment(name));
  req.timeouts = {options_.connect_timeout, options_.info_timeout, options_.idle_timeout};
  req.max_response_bytes = 1 << 20;
  auto res = SendAndWait(*http_, executor_, std::move(req), nullptr, "the marketplace");
  if (!res) return tl::unexpected(res.error());
  if (res->status == 404) {
    return util::Fail(ErrorCode::kNotFound,
                      fmt::format("plugin {}/{} is not in the marketplace", author, name));
  }
  if (res->status / 100 != 2) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      fmt::format("the marketplace refused the plugin's info ({})", Explain(*res)));
  }
  auto data = DataOf(*res);
  if (!data) return tl::unexpected(data.error());
  const auto* plugin = data->if_contains("plugin");
  if (!plugin || !plugin->is_object()) {
    return util::Fail(ErrorCode::kUpstreamFailed, "the marketplace's answer has no plugin");
  }
  MarketplacePlugin out;
  out.info = plugin->as_object();
  if (const auto* v = out.info.if_contains("latest_version"); v && v->is_string()) {
    out.latest_version = std::string(v->as_string());
  }
  if (out.latest_version.empty()) {
    return util::Fail(
        ErrorCode::kUpstreamFailed,
        fmt::format("the marketplace gives no latest_version for {}/{}", author, name));
  }
  // It names a folder under the data directory and goes into the download's URL.
  if (!ValidVersion(out.latest_version)) {
    return util::Fail(
        ErrorCode::kUpstreamFailed,
        fmt::format("the marketplace gives a malformed latest_version for {}/{}", author, name));
  }
  if (const auto* c = out.info.if_contains("checksum"); c && c->is_string()) {
    out.checksum = std::string(c->as_string());
  }
  return out;
}

util::Result<std::string> MarketplaceClient::Download(const std::string& author,
                                                      const std::string& name,
                                                      const std::string& version,
                                                      std::function<void(std::uint64_t)> progress) {
  net::HttpRequest req;
  req.url = fmt::format("{}/api/v1/marketplace/plugins/download/{}/{}/{}", base_url_,
                        Segment(author), Segment(name), Segment(version));
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
  auto res = SendAndWait(*http_, executor_, std::move(req), sink, "the marketplace");
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
  if (res->status == 404) {
    return util::Fail(
        ErrorCode::kNotFound,
        fmt::format("version {} of {}/{} is not in the marketplace", version, author, name));
  }
  if (res->status / 100 != 2) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      fmt::format("download failed ({})", Explain(*res)));
  }
  if (progress) progress(body.size());
  return body;
}

util::Result<util::Json> MarketplaceClient::List(int page, int page_size) {
  net::HttpRequest req;
  req.url =
      fmt::format("{}/api/v1/marketplace/plugins?page={}&page_size={}", base_url_, page, page_size);
  req.timeouts = {options_.connect_timeout, options_.info_timeout, options_.idle_timeout};
  req.max_response_bytes = 4 << 20;
  auto res = SendAndWait(*http_, executor_, std::move(req), nullptr, "the marketplace");
  if (!res) return tl::unexpected(res.error());
  if (res->status / 100 != 2) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      fmt::format("the marketplace refused the listing ({})", Explain(*res)));
  }
  auto data = DataOf(*res);
  if (!data) return tl::unexpected(data.error());
  return util::Json(std::move(*data));
}

}  // namespace sb::plugins
