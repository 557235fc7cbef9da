#include "langbot_import/config_mapping.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <optional>

namespace sb::langbot_import {
namespace {

using util::ErrorCode;
using util::Fail;

enum class Type { kString, kInt, kBool };

// One LangBot setting with a Switchboard equivalent. `langbot_default` is the value of
// LangBot 4.9.5's templates/config.yaml.
struct Rule {
  const char* langbot_key;
  const char* our_key;
  Type type;
  const char* langbot_default;
  bool secret;
  std::function<std::string(const config::Config&)> get;
  std::function<void(config::Config&, const std::string&)> set;
};

std::string Text(int v) { return std::to_string(v); }
std::string Text(bool v) { return v ? "true" : "false"; }

const std::vector<Rule>& Rules() {
  using C = config::Config;
  static const std::vector<Rule> rules = {
      {"api.port", "api.port", Type::kInt, "5300", false,
       [](const C& c) { return Text(c.api.port); },
       [](C& c, const std::string& v) { c.api.port = std::stoi(v); }},
      {"api.webhook_prefix", "api.webhook_prefix", Type::kString, "http://127.0.0.1:5300", false,
       [](const C& c) { return c.api.webhook_prefix; },
       [](C& c, const std::string& v) { c.api.webhook_prefix = v; }},
      {"api.extra_webhook_prefix", "api.extra_webhook_prefix", Type::kString, "", false,
       [](const C& c) { return c.api.extra_webhook_prefix; },
       [](C& c, const std::string& v) { c.api.extra_webhook_prefix = v; }},
      // One proxy here for both schemes; LangBot's https one wins when both are set.
      {"proxy.https", "network.proxy", Type::kString, "", true,
       [](const C& c) { return c.network.proxy; },
       [](C& c, const std::string& v) { c.network.proxy = v; }},
      {"proxy.http", "network.proxy", Type::kString, "", true,
       [](const C& c) { return c.network.proxy; },
       [](C& c, const std::string& v) { c.network.proxy = v; }},
      {"concurrency.pipeline", "runtime.max_concurrent_pipelines", Type::kInt, "20", false,
       [](const C& c) { return Text(c.runtime.max_concurrent_pipelines); },
       [](C& c, const std::string& v) { c.runtime.max_concurrent_pipelines = std::stoi(v); }},
      {"system.edition", "system.edition", Type::kString, "community", false,
       [](const C& c) { return c.system.edition; },
       [](C& c, const std::string& v) { c.system.edition = v; }},
      {"system.allow_modify_login_info", "system.allow_modify_login_info", Type::kBool, "true",
       false, [](const C& c) { return Text(c.system.allow_modify_login_info); },
       [](C& c, const std::string& v) { c.system.allow_modify_login_info = v == "true"; }},
      {"system.jwt.expire", "auth.jwt_expire_seconds", Type::kInt, "604800", false,
       [](const C& c) { return Text(c.auth.jwt_expire_seconds); },
       [](C& c, const std::string& v) { c.auth.jwt_expire_seconds = std::stoi(v); }},
      {"plugin.enable_marketplace", "system.enable_marketplace", Type::kBool, "true", false,
       [](const C& c) { return Text(c.system.enable_marketplace); },
       [](C& c, const std::string& v) { c.system.enable_marketplace = v == "true"; }},
      {"monitoring.auto_cleanup.retention_days", "monitoring.retention_days", Type::kInt, "30",
       false, [](const C& c) { return Text(c.monitoring.retention_days); },
       [](C& c, const std::string& v) { c.monitoring.retention_days = std::stoi(v); }},
      {"space.url", "space.url", Type::kString, "https://space.langbot.app", false,
       [](const C& c) { return c.space.url; }, [](C& c, const std::string& v) { c.space.url = v; }},
      {"space.disable_models_service", "system.disable_models_service", Type::kBool, "false", false,
       [](const C& c) { return Text(c.system.disable_models_service); },
       [](C& c, const std::string& v) { c.system.disable_models_service = v == "true"; }},
  };
  return rules;
}

// LangBot settings without an equivalent, by key or section, with the reason.
const std::vector<SkippedSetting>& NoEquivalent() {
  static const std::vector<SkippedSetting> skipped = {
      {"admins", "no instance-wide admin list here (pipelines keep their own access rules)"},
      {"command", "no instance-wide command settings here"},
      {"concurrency.session",
       "messages of one session always run one at a time here (not configurable)"},
      {"system.instance_id", "each Switchboard instance has its own identity"},
      {"system.recovery_key",
       "Switchboard keeps its own recovery key in the data directory (recovery_key)"},
      {"system.jwt.secret",
       "Switchboard keeps its own token secret (jwt_secret): LangBot's login sessions end, log in "
       "again"},
      {"system.limitation", "no limits on the number of bots, pipelines or extensions here"},
      {"database", "Switchboard's own database section chooses its storage"},
      {"vdb", "knowledge vectors live in Switchboard's own database"},
      {"storage", "uploads are kept in the data directory; no S3 storage here"},
      {"plugin.enable", "the plugin system is part of Switchboard and always present"},
      {"plugin.runtime_ws_url", "plugins run inside Switchboard; there is no plugin runtime"},
      {"plugin.display_plugin_debug_url", "no remote plugin debugging here"},
      {"monitoring.auto_cleanup.enabled",
       "monitoring records are always trimmed to monitoring.retention_days here"},
      {"monitoring.auto_cleanup.check_interval_hours", "the trimming interval is fixed here"},
      {"space.models_gateway_api_url",
       "the LangBot Models provider's base_url is imported with the providers"},
      {"space.oauth_authorize_url", "no LangBot Space sign-in here"},
      {"space.disable_telemetry", "Switchboard sends no telemetry"},
  };
  return skipped;
}

std::optional<YAML::Node> Find(const YAML::Node& root, const std::string& dotted) {
  // reset(), not operator=: assigning a yaml-cpp node writes through to the tree it refers to.
  YAML::Node node;
  node.reset(root);
  std::size_t start = 0;
  while (start <= dotted.size()) {
    const auto dot = dotted.find('.', start);
    const std::string part = dotted.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!node.IsMap() || !node[part]) return std::nullopt;
    const YAML::Node child = node[part];
    node.reset(child);
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
  return std::nullopt;
}

// The scalar as the rule's type, canonical text; nullopt when it is not of that type.
std::optional<std::string> Scalar(const YAML::Node& node, Type type) {
  if (!node.IsScalar()) return std::nullopt;
  try {
    switch (type) {
      case Type::kString:
        return node.as<std::string>();
      case Type::kInt:
        return std::to_string(node.as<int>());
      case Type::kBool:
        return Text(node.as<bool>());
    }
  } catch (const YAML::Exception&) {
  }
  return std::nullopt;
}

}  // namespace

util::Result<ConfigMapping> MapLangbotConfig(const std::string& yaml_text,
                                             const config::Config& current) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("config.yaml is not valid YAML: {}", e.what()));
  }
  if (!root.IsMap()) return Fail(ErrorCode::kInvalidArgument, "config.yaml is not a mapping");
  const config::Config defaults;
  ConfigMapping out;
  bool proxy_taken = false;
  for (const auto& rule : Rules()) {
    auto node = Find(root, rule.langbot_key);
    if (!node || node->IsNull()) continue;
    auto value = Scalar(*node, rule.type);
    if (!value) {
      out.skipped.push_back({rule.langbot_key, "its value is not of the expected type"});
      continue;
    }
    if (*value == rule.langbot_default) continue;  // LangBot's default: nothing to carry over
    if (std::string(rule.our_key) == "network.proxy") {
      if (proxy_taken) {
        out.skipped.push_back({rule.langbot_key,
                               "one proxy serves both schemes here; "
                               "proxy.https was taken"});
        continue;
      }
      proxy_taken = true;
    }
    ConfigSetting s;
    s.langbot_key = rule.langbot_key;
    s.our_key = rule.our_key;
    s.value = *value;
    s.current = rule.get(current);
    s.current_is_default = s.current == rule.get(defaults);
    s.secret = rule.secret;
    s.apply = [set = rule.set, v = *value](config::Config& c) { set(c, v); };
    out.settings.push_back(std::move(s));
  }
  for (const auto& skip : NoEquivalent()) {
    if (auto node = Find(root, skip.langbot_key); node && !node->IsNull()) {
      // An empty list or map holds nothing to lose.
      if ((node->IsSequence() || node->IsMap()) && node->size() == 0) continue;
      if (node->IsScalar() && node->Scalar().empty()) continue;
      out.skipped.push_back(skip);
    }
  }
  return out;
}

}  // namespace sb::langbot_import
