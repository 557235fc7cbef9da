// Proxy settings: from the conventional environment variables, and parsed for use.
//
// One HttpClientOptions::proxy_url serves both schemes, so from the environment the first
// non-empty of HTTPS_PROXY, https_proxy, HTTP_PROXY, http_proxy, ALL_PROXY, all_proxy is taken:
// the services we call are almost all https, so the https proxy is the one that matters. A value
// without a scheme ("proxy:3128", as many shells set it) is read as http://.
#include "net/proxy.hpp"

#include <openssl/evp.h>

#include <boost/url/parse.hpp>
#include <cctype>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "net/http_client.hpp"

namespace sb::net {
namespace {

std::string FirstSet(const std::vector<std::pair<std::string, std::string>>& env,
                     std::initializer_list<const char*> names) {
  for (const char* name : names) {
    for (const auto& [key, value] : env) {
      if (key == name && !value.empty()) return value;
    }
  }
  return {};
}

std::string Base64(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()),
                                static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string HostPort(const std::string& host, const std::string& port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + port;
  return host + ":" + port;
}

HttpClientOptions WithProxyFromEnvironment(
    HttpClientOptions options, const std::vector<std::pair<std::string, std::string>>& env) {
  if (options.proxy_url.empty()) {
    std::string url = FirstSet(
        env, {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"});
    if (!url.empty() && url.find("://") == std::string::npos) url = "http://" + url;
    options.proxy_url = std::move(url);
  }
  if (options.no_proxy.empty()) options.no_proxy = FirstSet(env, {"NO_PROXY", "no_proxy"});
  return options;
}

ProxyConfig ParseProxy(const HttpClientOptions& options) {
  ProxyConfig proxy;
  std::string_view rest = options.no_proxy;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string entry = AsciiLower(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (!entry.empty() && entry.front() == '.') entry.erase(0, 1);
    if (!entry.empty()) proxy.no_proxy.push_back(std::move(entry));
  }
  if (options.proxy_url.empty()) return proxy;
  auto url = boost::urls::parse_absolute_uri(options.proxy_url);
  if (!url || url->scheme_id() != boost::urls::scheme::http || url->host_address().empty()) {
    // The URL itself may hold proxy credentials, so it is not echoed.
    proxy.error = "proxy_url must look like http://host:port";
    return proxy;
  }
  proxy.enabled = true;
  proxy.host = url->host_address();
  proxy.port = url->has_port() ? std::string(url->port()) : "80";
  if (url->has_userinfo()) {
    proxy.authorization = "Basic " + Base64(url->user() + ":" + url->password());
  }
  return proxy;
}

bool BypassesProxy(const ProxyConfig& proxy, const std::string& host) {
  const std::string h = AsciiLower(host);
  for (const auto& entry : proxy.no_proxy) {
    if (entry == "*" || h == entry) return true;
    if (h.size() > entry.size() && h.ends_with(entry) && h[h.size() - entry.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

}  // namespace sb::net
