#include "mcp/server_config.hpp"

#include <algorithm>

namespace sb::mcp {

HttpTarget HttpTargetOf(const domain::McpServer& server) {
  HttpTarget t;
  const auto& a = server.extra_args;
  if (auto u = a.find("url"); u != a.end() && u->value().is_string()) {
    t.url = std::string(u->value().as_string());
  }
  if (auto h = a.find("headers"); h != a.end() && h->value().is_object()) {
    for (const auto& kv : h->value().as_object()) {
      if (kv.value().is_string()) {
        t.headers.emplace_back(std::string(kv.key()), std::string(kv.value().as_string()));
      }
    }
  }
  if (auto to = a.find("timeout"); to != a.end() && to->value().is_number()) {
    const double s = std::clamp(to->value().to_number<double>(), 0.1, 600.0);
    t.timeout = std::chrono::milliseconds(static_cast<long long>(s * 1000));
  }
  return t;
}

}  // namespace sb::mcp
