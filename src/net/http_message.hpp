// The outbound HTTP request and response as values, apart from the client so that code which
// only builds requests and reads responses (the wire protocols) compiles without Asio.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sb::net {

struct HttpTimeouts {
  std::chrono::milliseconds connect{10'000};  // DNS + TCP + TLS handshake (+ proxy CONNECT)
  std::chrono::milliseconds total{120'000};   // the whole exchange, body included
  std::chrono::milliseconds idle{60'000};     // longest gap between two reads of the response
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;  // absolute http:// or https:// URL
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  HttpTimeouts timeouts;
  std::size_t max_response_bytes = 16 * 1024 * 1024;  // body bytes (streamed ones count too)
};

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower case
  std::string body;                                          // empty when a sink took a 2xx body

  // Empty when absent.
  std::string_view Header(std::string_view lower_name) const;
};

}  // namespace sb::net
