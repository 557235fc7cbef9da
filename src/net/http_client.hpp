// Outbound HTTP(S) for everything that talks to an external service (model providers now, chat
// platforms and the marketplace later): one interface, awaited from coroutines on the I/O
// context, so tests and adapters share the same client.
//   HttpRequest req{.method = "POST", .url = base + "/chat/completions", .body = json};
//   req.headers.emplace_back("Authorization", "Bearer " + key);
//   auto res = co_await client.Send(std::move(req));            // whole body
//   auto res = co_await client.Send(std::move(req), sink);      // 2xx body streamed to sink
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/http_message.hpp"
#include "util/error.hpp"

namespace sb::net {

// Receives a 2xx response body piece by piece as it arrives. Returning false stops reading: the
// call then completes with kCancelled and the connection is not reused.
using BodySink = std::function<bool(std::string_view piece)>;

// Thread-safe. Send never throws; it fails with:
//   kInvalidArgument      malformed URL or unsupported scheme
//   kUpstreamUnreachable  DNS failure, connection refused, TLS handshake or certificate failure,
//                         proxy refused the tunnel
//   kUpstreamTimeout      a timeout of HttpRequest::timeouts expired (the message says which)
//   kUpstreamFailed       connection closed mid-response, malformed HTTP, or a body over
//                         max_response_bytes
//   kCancelled            the awaiting coroutine was cancelled (asio cancellation slot) or the
//                         sink returned false
// Non-2xx statuses are not errors: the caller classifies them. Error messages name the host but
// never a header value, so keys cannot leak.
class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual boost::asio::awaitable<util::Result<HttpResponse>> Send(HttpRequest request,
                                                                  BodySink sink = nullptr) = 0;
};

struct HttpClientOptions {
  bool verify_tls = true;  // certificate and host name, against the system CA store
  std::string ca_file;     // extra PEM file of trusted CAs (self-hosted services, tests)
  std::string proxy_url;   // "http://host:port"; empty: none. HTTPS goes through CONNECT.
  std::string no_proxy;    // comma-separated hosts / domain suffixes / "*" that skip the proxy
  std::size_t max_idle_per_host = 8;        // kept-alive connections reused per host:port
  std::chrono::seconds idle_keepalive{30};  // an unused pooled connection is closed after this
  std::string user_agent = "Switchboard";
};

// The proxy settings of the usual variables (HTTPS_PROXY, https_proxy, HTTP_PROXY, http_proxy,
// ALL_PROXY, NO_PROXY, no_proxy) read from `env`; explicit config wins when non-empty.
HttpClientOptions WithProxyFromEnvironment(
    HttpClientOptions options, const std::vector<std::pair<std::string, std::string>>& env);

// The Boost.Beast implementation: keep-alive pool per scheme+host+port, TLS via OpenSSL.
std::shared_ptr<HttpClient> MakeHttpClient(boost::asio::any_io_executor executor,
                                           HttpClientOptions options);

}  // namespace sb::net
