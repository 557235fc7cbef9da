// The plugin marketplace (LangBot Space's paths, contract §4) at a configurable base URL: a
// plugin's info with its latest version (and checksum when published), package downloads with a
// size cap and progress, and the listing the console shows. Blocking calls, for background tasks
// and handlers on the blocking pool; the HTTP itself runs on the I/O context.
//   MarketplaceClient market(http, io.get_executor(), "https://space.langbot.app");
//   auto info = market.Info("alice", "echo");       // kNotFound: not in the marketplace
//   auto zip = market.Download("alice", "echo", info->latest_version, progress);
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::net {
class HttpClient;
}

namespace sb::plugins {

struct MarketplacePlugin {
  std::string latest_version;
  std::string checksum;   // sha256 hex of latest_version's package; empty when not published
  util::JsonObject info;  // the marketplace's object as given
};

struct MarketplaceOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds info_timeout{30'000};
  std::chrono::milliseconds download_timeout{300'000};
  std::chrono::milliseconds idle_timeout{30'000};  // longest silence within a download
  std::uint64_t max_package_bytes = 50ull << 20;
};

class MarketplaceClient {
 public:
  MarketplaceClient(std::shared_ptr<net::HttpClient> http, boost::asio::any_io_executor executor,
                    std::string base_url, MarketplaceOptions options = {});

  // kNotFound "plugin a/b is not in the marketplace"; kUpstream* when the marketplace fails.
  util::Result<MarketplacePlugin> Info(const std::string& author, const std::string& name);

  // The package bytes; `progress` (may be null) gets the bytes received so far now and then.
  // kPayloadTooLarge over max_package_bytes; kNotFound for an unknown version.
  util::Result<std::string> Download(const std::string& author, const std::string& name,
                                     const std::string& version,
                                     std::function<void(std::uint64_t)> progress);

  // The marketplace's `data` of its plugin listing, for the console.
  util::Result<util::Json> List(int page, int page_size);

  const std::string& base_url() const { return base_url_; }

 private:
  std::shared_ptr<net::HttpClient> http_;
  boost::asio::any_io_executor executor_;
  std::string base_url_;
  MarketplaceOptions options_;
};

}  // namespace sb::plugins
