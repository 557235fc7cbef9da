#include "mcp/server_config.hpp"

#include <algorithm>

namespace sb::mcp {

namespace {

std::chrono::milliseconds Seconds(const util::JsonObject& a, std::string_view key,
                                  std::chrono::milliseconds fallback) {
  auto it = a.find(key);
  if (it == a.end() || !it->value().is_number()) return fallback;
  const double s = std::clamp(it->value().to_number<double>(), 0.1, 600.0);
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

}  // namespace

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

SseTarget SseTargetOf(const domain::McpServer& server) {
  const HttpTarget http = HttpTargetOf(server);
  SseTarget t;
  t.url = http.url;
  t.headers = http.headers;
  t.limits = {http.timeout, http.max_message_bytes, http.max_tools};
  t.read_timeout = Seconds(server.extra_args, "ssereadtimeout", t.read_timeout);
  return t;
}

StdioTarget StdioTargetOf(const domain::McpServer& server) {
  StdioTarget t;
  const auto& a = server.extra_args;
  auto c = a.find("command");
  if (c == a.end() || !c->value().is_string() || c->value().as_string().empty()) return t;
  t.argv.emplace_back(c->value().as_string());
  if (auto args = a.find("args"); args != a.end() && args->value().is_array()) {
    for (const auto& v : args->value().as_array()) {
      if (v.is_string()) t.argv.emplace_back(v.as_string());
    }
  }
  if (auto env = a.find("env"); env != a.end() && env->value().is_object()) {
    for (const auto& kv : env->value().as_object()) {
      if (kv.value().is_string()) {
        t.env.emplace_back(std::string(kv.key()), std::string(kv.value().as_string()));
      }
    }
  }
  t.limits.timeout = Seconds(a, "timeout", t.limits.timeout);
  return t;
}

}  // namespace sb::mcp
