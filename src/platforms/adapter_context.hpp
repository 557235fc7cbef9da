// Everything an adapter is built with: its bot's config and the ports it talks through. Kept apart
// from platform_adapter.hpp so that codecs, which see only messages, do not pull in Asio.
//   AdapterContext context{.bot_uuid = uuid, .config = config, .executor = ex, .http = http,
//                          .websockets = ws, .clock = &clock, .host = &host};
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>

#include "util/clock.hpp"
#include "util/json.hpp"

namespace sb::net {
class HttpClient;
class WebSocketTransport;
}  // namespace sb::net

namespace sb::platforms {

class AdapterHost;

// The host, the clock and the transports outlive the adapter.
struct AdapterContext {
  std::string bot_uuid;
  util::JsonObject config;  // the bot's adapter config, defaults filled in
  // The public URL of the bot's webhook (`api.webhook_prefix` + "/bots/<uuid>"), for adapters
  // that register it with the platform; empty when no public prefix is configured.
  std::string webhook_url;
  boost::asio::any_io_executor executor;
  std::shared_ptr<net::HttpClient> http;
  // WebSocket client connections and listeners (platform gateways, OneBot's reverse socket).
  std::shared_ptr<net::WebSocketTransport> websockets;
  const util::Clock* clock = nullptr;
  AdapterHost* host = nullptr;
};

}  // namespace sb::platforms
