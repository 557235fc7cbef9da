// Proxy settings from the conventional environment variables.
//
// One HttpClientOptions::proxy_url serves both schemes, so from the environment the first
// non-empty of HTTPS_PROXY, https_proxy, HTTP_PROXY, http_proxy, ALL_PROXY, all_proxy is taken:
// the services we call are almost all https, so the https proxy is the one that matters. A value
// without a scheme ("proxy:3128", as many shells set it) is read as http://.
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

}  // namespace

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

}  // namespace sb::net
