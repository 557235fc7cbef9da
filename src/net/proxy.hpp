// The proxy and no_proxy settings of HttpClientOptions, parsed once, and the small host/port
// helpers the HTTP client and the WebSocket transport share. Internal to net/; no Asio here.
//   ProxyConfig proxy = ParseProxy(options);
//   if (proxy.enabled && !BypassesProxy(proxy, host)) ... CONNECT HostPort(host, port) ...
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "net/http_client.hpp"

namespace sb::net {

struct ProxyConfig {
  bool enabled = false;
  std::string host;
  std::string port;
  std::string authorization;  // "Basic ..." or empty
  std::vector<std::string> no_proxy;
  std::string error;  // non-empty: proxy_url is malformed and every call fails
};

ProxyConfig ParseProxy(const HttpClientOptions& options);

// True when `host` matches a no_proxy entry ("*", the host itself or a parent domain).
bool BypassesProxy(const ProxyConfig& proxy, const std::string& host);

// "host:port" with IPv6 literals bracketed, as CONNECT and Host want it.
std::string HostPort(const std::string& host, const std::string& port);

std::string AsciiLower(std::string_view s);

}  // namespace sb::net
