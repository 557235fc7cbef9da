// ProcessPluginManager on the message path (domain::PluginHooks: events, commands, prompt and
// reply edits, tools) and as the host of plugin calls (PluginCore). Its API side (install,
// upgrade, delete, config) is plugin_manager.cpp.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "plugins/plugin_manager.hpp"

namespace sb::plugins {
namespace {

using util::ErrorCode;

// A plugin's reply: a string, or message elements whose texts are joined.
std::string ReplyText(const util::JsonObject& answer) {
  const auto* reply = answer.if_contains("reply");
  if (!reply) return {};
  if (reply->is_string()) return std::string(reply->as_string());
  std::string out;
  if (reply->is_array()) {
    for (const auto& e : reply->as_array()) {
      const auto* o = e.if_object();
      const auto* text = o ? o->if_contains("text") : nullptr;
      if (text && text->is_string()) out += std::string_view(text->as_string());
    }
  }
  return out;
}

}  // namespace

void ProcessPluginManager::MessageReceived(
    const domain::PluginBinding& binding, util::JsonObject event,
    std::function<void(std::optional<domain::PluginEventReply>)> done) {
  auto listeners = Listeners(binding, "message_received");  // not running: skipped at once
  if (listeners.empty()) return done(std::nullopt);
  // One plugin at a time, in priority order, until one answers for the message.
  struct Chain {
    std::vector<domain::PluginKey> listeners;
    std::size_t next = 0;
    util::JsonObject event;
    std::function<void(std::optional<domain::PluginEventReply>)> done;
  };
  auto chain =
      std::make_shared<Chain>(Chain{std::move(listeners), 0, std::move(event), std::move(done)});
  auto step = std::make_shared<std::function<void()>>();
  *step = [this, chain, weak_step = std::weak_ptr<std::function<void()>>(step)] {
    if (chain->next == chain->listeners.size()) return chain->done(std::nullopt);
    const domain::PluginKey key = chain->listeners[chain->next++];
    auto step = weak_step.lock();
    supervisor_.Call(key, "event", chain->event, options_.event_deadline,
                     [this, chain, step, key](util::Result<util::Json> answer) {
                       if (!answer) {
                         PluginLog(key, "skipped for a message: " + answer.error().message);
                         return (*step)();
                       }
                       const auto* o = answer->if_object();
                       domain::PluginEventReply reply;
                       reply.plugin_id = key.id();
                       if (o) {
                         reply.reply = ReplyText(*o);
                         const auto* prevent = o->if_contains("prevent_default");
                         reply.prevent_default =
                             prevent && prevent->is_bool() && prevent->as_bool();
                       }
                       if (reply.reply.empty() && !reply.prevent_default) return (*step)();
                       chain->done(std::move(reply));
                     });
  };
  (*step)();
}

void ProcessPluginManager::Command(
    const domain::PluginBinding& binding, const std::string& command, util::JsonObject data,
    std::function<void(std::optional<util::Result<std::string>>)> done) {
  for (const auto& key : Bound(binding)) {
    auto caps = supervisor_.Capabilities(key);
    if (!caps) continue;
    for (const auto& c : caps->commands) {
      if (c.name != command) continue;
      supervisor_.Call(key, "command", std::move(data), options_.command_deadline,
                       [done = std::move(done)](util::Result<util::Json> answer) {
                         if (!answer)
                           return done(util::Result<std::string>(tl::unexpected(answer.error())));
                         const auto* o = answer->if_object();
                         done(util::Result<std::string>(o ? ReplyText(*o) : std::string()));
                       });
      return;
    }
  }
  done(std::nullopt);
}

std::vector<domain::PluginKey> ProcessPluginManager::Listeners(const domain::PluginBinding& binding,
                                                               const std::string& event) const {
  std::vector<domain::PluginKey> out;
  for (auto& key : Bound(binding)) {
    auto caps = supervisor_.Capabilities(key);  // nullopt: not running
    if (caps && std::find(caps->events.begin(), caps->events.end(), event) != caps->events.end()) {
      out.push_back(std::move(key));
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ProcessPluginManager::Commands(
    const domain::PluginBinding& binding) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> seen;
  for (const auto& key : Bound(binding)) {
    auto caps = supervisor_.Capabilities(key);
    if (!caps) continue;
    for (const auto& c : caps->commands) {
      if (seen.insert(c.name).second) out.emplace_back(c.name, c.description);
    }
  }
  return out;
}

bool ProcessPluginManager::Listens(const domain::PluginBinding& binding, const std::string& event) {
  return !Listeners(binding, event).empty();
}

void ProcessPluginManager::Transform(const domain::PluginBinding& binding, const std::string& event,
                                     util::JsonObject data, const std::string& key,
                                     std::function<void(util::JsonObject)> done) {
  struct Chain {
    std::vector<domain::PluginKey> listeners;
    std::size_t next = 0;
    util::JsonObject data;
    std::string key;
    std::function<void(util::JsonObject)> done;
  };
  data["event"] = event;
  auto chain = std::make_shared<Chain>(
      Chain{Listeners(binding, event), 0, std::move(data), key, std::move(done)});
  auto step = std::make_shared<std::function<void()>>();
  *step = [this, chain, weak = std::weak_ptr<std::function<void()>>(step)] {
    if (chain->next == chain->listeners.size()) return chain->done(std::move(chain->data));
    const domain::PluginKey plugin = chain->listeners[chain->next++];
    auto self = weak.lock();
    supervisor_.Call(plugin, "event", chain->data, options_.event_deadline,
                     [this, chain, self, plugin](util::Result<util::Json> answer) {
                       if (!answer) {
                         PluginLog(plugin, "skipped for a message: " + answer.error().message);
                       } else if (const auto* o = answer->if_object()) {
                         if (const auto* v = o->if_contains(chain->key))
                           chain->data[chain->key] = *v;
                       }
                       (*self)();
                     });
  };
  (*step)();
}

std::vector<domain::ToolSpec> ProcessPluginManager::Tools(const domain::PluginBinding& binding) {
  std::vector<domain::ToolSpec> out;
  std::set<std::string> seen;
  for (const auto& key : Bound(binding)) {
    auto caps = supervisor_.Capabilities(key);
    if (!caps) continue;
    for (const auto& t : caps->tools) {
      if (seen.insert(t.name).second) out.push_back({t.name, t.description, t.parameters});
    }
  }
  return out;
}

void ProcessPluginManager::CallTool(const domain::PluginBinding& binding, const std::string& name,
                                    const std::string& arguments,
                                    std::function<void(util::Result<std::string>)> done) {
  for (const auto& key : Bound(binding)) {
    auto caps = supervisor_.Capabilities(key);
    if (!caps) continue;
    for (const auto& t : caps->tools) {
      if (t.name != name) continue;
      auto parsed = util::ParseJson(arguments.empty() ? "{}" : arguments);
      util::JsonObject data{
          {"tool", name},
          {"arguments", parsed && parsed->is_object() ? parsed->as_object() : util::JsonObject()}};
      supervisor_.Call(key, "tool_call", std::move(data), options_.tool_deadline,
                       [done = std::move(done)](util::Result<util::Json> answer) {
                         if (!answer) return done(tl::unexpected(answer.error()));
                         const auto* o = answer->if_object();
                         const auto* result = o ? o->if_contains("result") : nullptr;
                         done(util::SerializeJson(result ? *result : util::Json(nullptr)));
                       });
      return;
    }
  }
  done(util::Fail(ErrorCode::kNotFound, fmt::format("no plugin offers the tool {}", name)));
}

void ProcessPluginManager::HandlePluginCall(const domain::PluginKey& plugin,
                                            const std::string& action, const util::JsonObject& data,
                                            std::function<void(util::Result<util::Json>)> answer) {
  auto text = [&data](const char* key) -> std::optional<std::string> {
    const auto* v = data.if_contains(key);
    if (!v || !v->is_string()) return std::nullopt;
    return std::string(v->as_string());
  };
  if (action == "log") {
    PluginLog(plugin, text("text").value_or(""));
    return answer(util::Json(util::JsonObject()));
  }
  if (action == "storage_get" || action == "storage_set") {
    auto key = text("key");
    if (!key || key->empty() || key->size() > 256) {
      return answer(util::Fail(ErrorCode::kInvalidArgument, "key must be a string of 1-256 bytes"));
    }
    auto value = text("value");
    if (action == "storage_set" && (!value || value->size() > (1 << 20))) {
      return answer(
          util::Fail(ErrorCode::kInvalidArgument, "value must be a string of at most 1 MiB"));
    }
    // The database is not touched on an I/O thread.
    deps_.blocking->Post([this, plugin, action, key = *key, value, answer = std::move(answer)] {
      if (action == "storage_get") {
        auto got = deps_.plugins->StorageGet(plugin, key);
        if (!got) return answer(tl::unexpected(got.error()));
        return answer(util::Json(
            util::JsonObject{{"value", *got ? util::Json(**got) : util::Json(nullptr)}}));
      }
      auto set = deps_.plugins->StorageSet(plugin, key, *value);
      if (!set) return answer(tl::unexpected(set.error()));
      answer(util::Json(util::JsonObject()));
    });
    return;
  }
  if (action == "send_message" && deps_.send_message)
    return deps_.send_message(plugin, data, answer);
  if (action == "invoke_llm" && deps_.invoke_llm) return deps_.invoke_llm(plugin, data, answer);
  if (action == "get_config_file" && deps_.get_config_file) {
    return deps_.get_config_file(plugin, data, answer);
  }
  answer(util::Fail(ErrorCode::kInvalidArgument,
                    fmt::format("the core does not offer {}", action.substr(0, 64))));
}

void ProcessPluginManager::PluginLog(const domain::PluginKey& plugin, const std::string& line) {
  spdlog::info("plugin {}: {}", plugin.id(), line.substr(0, 2000));
}

}  // namespace sb::plugins
