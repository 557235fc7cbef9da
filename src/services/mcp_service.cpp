#include "services/mcp_service.hpp"

#include <fmt/format.h>

#include "services/config_schema.hpp"
#include "services/provider_service.hpp"
#include "util/ids.hpp"

namespace sb::services {

namespace {

using util::ErrorCode;

constexpr std::size_t kMaxName = 255;
constexpr std::size_t kMaxArgsBytes = 64 * 1024;
constexpr double kMaxTimeoutSeconds = 600;

util::Result<void> Invalid(std::string message) {
  return util::Fail(ErrorCode::kInvalidArgument, std::move(message));
}

// The secret-bearing maps of each mode.
constexpr const char* kSecretMaps[] = {"env", "headers"};

util::Result<void> CheckStringMap(const util::JsonObject& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end() || it->value().is_null()) return util::Ok();
  if (!it->value().is_object()) return Invalid(fmt::format("extra_args.{} must be an object", key));
  for (const auto& kv : it->value().as_object()) {
    if (!kv.value().is_string()) {
      return Invalid(fmt::format("extra_args.{}.{} must be a string", key,
                                 std::string_view(kv.key()).substr(0, 64)));
    }
  }
  return util::Ok();
}

util::Result<void> CheckTimeout(util::JsonObject& args, const char* key, double fallback) {
  auto it = args.find(key);
  if (it == args.end() || it->value().is_null()) {
    args[key] = fallback;
    return util::Ok();
  }
  if (!it->value().is_number()) return Invalid(fmt::format("extra_args.{} must be a number", key));
  const double v = it->value().to_number<double>();
  if (!(v > 0) || v > kMaxTimeoutSeconds) {
    return Invalid(fmt::format("extra_args.{} must be above 0 and at most {} seconds", key,
                               kMaxTimeoutSeconds));
  }
  return util::Ok();
}

}  // namespace

util::Result<void> CheckMcpServer(domain::McpServer& s) {
  if (s.name.empty()) return Invalid("name is required");
  if (s.name.size() > kMaxName) return Invalid("name is longer than 255 characters");
  // The name is a path segment of every other route.
  if (s.name.find_first_of("/?#%\\") != std::string::npos || s.name == "_") {
    return Invalid("name must not be '_' nor contain '/', '?', '#', '%' or '\\'");
  }
  if (s.mode != "stdio" && s.mode != "sse" && s.mode != "http") {
    return Invalid("mode must be 'stdio', 'sse' or 'http'");
  }
  auto& a = s.extra_args;
  if (s.mode == "stdio") {
    auto cmd = a.find("command");
    if (cmd == a.end() || !cmd->value().is_string() || cmd->value().as_string().empty()) {
      return Invalid("extra_args.command is required for mode stdio");
    }
    if (auto args = a.find("args"); args != a.end() && !args->value().is_null()) {
      if (!args->value().is_array()) return Invalid("extra_args.args must be a list of strings");
      for (const auto& v : args->value().as_array()) {
        if (!v.is_string()) return Invalid("extra_args.args must be a list of strings");
      }
    } else {
      a["args"] = util::JsonArray{};
    }
    if (auto r = CheckStringMap(a, "env"); !r) return r;
    if (!a.contains("env") || a.at("env").is_null()) a["env"] = util::JsonObject{};
  } else {
    auto url = a.find("url");
    if (url == a.end() || !url->value().is_string() || !IsHttpUrl(url->value().as_string())) {
      return Invalid(fmt::format("extra_args.url must be an http(s) URL for mode {}", s.mode));
    }
    if (auto r = CheckStringMap(a, "headers"); !r) return r;
    if (!a.contains("headers") || a.at("headers").is_null()) a["headers"] = util::JsonObject{};
    if (auto r = CheckTimeout(a, "timeout", 10); !r) return r;
    if (s.mode == "sse") {
      if (auto r = CheckTimeout(a, "ssereadtimeout", 30); !r) return r;
    }
  }
  if (util::SerializeJson(a).size() > kMaxArgsBytes) {
    return Invalid("extra_args is larger than 64 KiB");
  }
  return util::Ok();
}

util::JsonObject MaskMcpSecrets(util::JsonObject extra_args) {
  for (const char* key : kSecretMaps) {
    auto it = extra_args.find(key);
    if (it == extra_args.end() || !it->value().is_object()) continue;
    for (auto& kv : it->value().as_object()) {
      if (kv.value().is_string() && !kv.value().as_string().empty()) {
        kv.value() = MaskSecret(kv.value().as_string());
      }
    }
  }
  return extra_args;
}

util::JsonObject KeepMaskedMcpSecrets(util::JsonObject incoming, const util::JsonObject& stored) {
  for (const char* key : kSecretMaps) {
    auto in = incoming.find(key);
    auto old = stored.find(key);
    if (in == incoming.end() || old == stored.end() || !in->value().is_object() ||
        !old->value().is_object()) {
      continue;
    }
    const auto& old_map = old->value().as_object();
    for (auto& kv : in->value().as_object()) {
      auto prev = old_map.find(kv.key());
      if (prev == old_map.end() || !prev->value().is_string() || !kv.value().is_string()) continue;
      const auto& secret = prev->value().as_string();
      if (!secret.empty() && kv.value().as_string() == MaskSecret(secret)) kv.value() = secret;
    }
  }
  return incoming;
}

McpService::McpService(domain::McpServerRepository& repo, const util::Clock& clock,
                       domain::McpRuntimeView* runtime)
    : repo_(repo), clock_(clock), runtime_(runtime) {}

util::Result<std::vector<McpServerView>> McpService::List() {
  auto list = repo_.List();
  if (!list) return tl::make_unexpected(list.error());
  std::vector<McpServerView> out;
  out.reserve(list->size());
  for (auto& s : *list) {
    McpServerView v{std::move(s), std::nullopt};
    if (runtime_) v.runtime = runtime_->Info(v.server.name);
    out.push_back(std::move(v));
  }
  return out;
}

util::Result<McpServerView> McpService::Get(const std::string& name) {
  auto s = repo_.FindByName(name);
  if (!s) return tl::make_unexpected(s.error());
  McpServerView v{std::move(*s), std::nullopt};
  if (runtime_) v.runtime = runtime_->Info(v.server.name);
  return v;
}

util::Result<std::string> McpService::Create(const McpServerDraft& draft) {
  domain::McpServer s;
  s.uuid = util::NewUuid();
  s.name = draft.name;
  s.enable = draft.enable;
  s.mode = draft.mode;
  s.extra_args = draft.extra_args;
  if (auto r = CheckMcpServer(s); !r) return tl::make_unexpected(r.error());
  s.created_at = s.updated_at = clock_.Now();
  if (auto r = repo_.Insert(s); !r) return tl::make_unexpected(r.error());
  if (runtime_) runtime_->Reload();
  return s.uuid;
}

util::Result<void> McpService::Update(const std::string& name, const McpServerPatch& patch) {
  auto s = repo_.FindByName(name);
  if (!s) return tl::make_unexpected(s.error());
  if (patch.name) s->name = *patch.name;
  if (patch.enable) s->enable = *patch.enable;
  if (patch.mode) s->mode = *patch.mode;
  if (patch.extra_args) s->extra_args = KeepMaskedMcpSecrets(*patch.extra_args, s->extra_args);
  if (auto r = CheckMcpServer(*s); !r) return r;
  s->updated_at = clock_.Now();
  if (auto r = repo_.Update(*s); !r) return r;
  if (runtime_) runtime_->Reload();
  return util::Ok();
}

util::Result<void> McpService::Delete(const std::string& name) {
  auto s = repo_.FindByName(name);
  if (!s) return tl::make_unexpected(s.error());
  if (auto r = repo_.Delete(s->uuid); !r) return r;
  if (runtime_) runtime_->Reload();
  return util::Ok();
}

util::Result<domain::McpServer> McpService::PrepareTest(const McpServerDraft& draft) {
  domain::McpServer s;
  s.name = draft.name.empty() ? std::string("test") : draft.name;
  s.enable = true;
  s.mode = draft.mode;
  s.extra_args = draft.extra_args;
  if (!draft.name.empty()) {
    if (auto stored = repo_.FindByName(draft.name)) {
      s.extra_args = KeepMaskedMcpSecrets(std::move(s.extra_args), stored->extra_args);
    }
  }
  if (auto r = CheckMcpServer(s); !r) return tl::make_unexpected(r.error());
  return s;
}

util::Result<std::int64_t> McpService::Test(const std::string& name, const McpServerDraft& draft) {
  if (!tester_)
    return util::Fail(ErrorCode::kUnavailable, "MCP connection tests are not available");
  domain::McpServer server;
  if (draft.mode.empty()) {
    auto stored = repo_.FindByName(name);
    if (!stored) return tl::make_unexpected(stored.error());
    server = std::move(*stored);
  } else {
    McpServerDraft d = draft;
    if (d.name.empty() && name != "_") d.name = name;
    auto prepared = PrepareTest(d);
    if (!prepared) return tl::make_unexpected(prepared.error());
    server = std::move(*prepared);
  }
  return tester_->StartTest(server);
}

}  // namespace sb::services
