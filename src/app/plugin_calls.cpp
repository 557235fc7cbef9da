#include "app/plugin_calls.hpp"

#include "domain/message_json.hpp"
#include "platforms/common/signatures.hpp"

namespace sb::app {
namespace {

using util::ErrorCode;

std::string Text(const util::JsonObject& data, const char* key) {
  const auto* v = data.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

plugins::PluginCallHandler MakeSendMessageCall(services::BotService& bots,
                                               util::BlockingExecutor& blocking) {
  return [&bots, &blocking](const domain::PluginKey&, const util::JsonObject& data,
                            std::function<void(util::Result<util::Json>)> answer) {
    auto bot = util::BotId::Parse(Text(data, "bot_uuid"), "bot_uuid");
    if (!bot) return answer(tl::unexpected(bot.error()));
    domain::OutgoingMessage message;
    const std::string type = Text(data, "target_type");
    if (type != "person" && type != "group") {
      return answer(util::Fail(ErrorCode::kInvalidArgument, "target_type must be person or group"));
    }
    message.target_type =
        type == "group" ? domain::TargetType::kGroup : domain::TargetType::kPerson;
    message.target_id = Text(data, "target_id");
    if (message.target_id.empty()) {
      return answer(util::Fail(ErrorCode::kInvalidArgument, "target_id is required"));
    }
    auto chain = domain::DecodeMessageChain(data, "message_chain");
    if (!chain) return answer(tl::unexpected(chain.error()));
    message.chain = std::move(*chain);
    // The bot's record is read from the database: not on the plugin's I/O strand.
    blocking.Post([&bots, id = *bot, message = std::move(message), answer = std::move(answer)] {
      bots.SendMessage(id, message, [answer](util::Result<domain::SendReceipt> sent) {
        if (!sent) return answer(tl::unexpected(sent.error()));
        util::JsonObject out{{"sent", true}};
        if (sent->message_id) out["message_id"] = *sent->message_id;
        answer(util::Json(std::move(out)));
      });
    });
  };
}

plugins::PluginCallHandler MakeInvokeLlmCall(domain::ModelResolver& models,
                                             domain::LlmGateway& gateway,
                                             util::BlockingExecutor& blocking) {
  return [&models, &gateway, &blocking](const domain::PluginKey&, const util::JsonObject& data,
                                        std::function<void(util::Result<util::Json>)> answer) {
    const std::string uuid = Text(data, "model_uuid");
    const auto* list = data.if_contains("messages");
    if (uuid.empty() || !list || !list->is_array() || list->as_array().empty()) {
      return answer(util::Fail(ErrorCode::kInvalidArgument,
                               "model_uuid and a non-empty messages list are required"));
    }
    domain::ChatRequest request;
    for (const auto& item : list->as_array()) {
      const auto* o = item.if_object();
      const std::string role = o ? Text(*o, "role") : "";
      if (role != "system" && role != "user" && role != "assistant") {
        return answer(util::Fail(ErrorCode::kInvalidArgument,
                                 "each message needs a role of system, user or assistant"));
      }
      domain::ChatMessage m;
      m.role = role;
      m.content.push_back({domain::ContentPart::Kind::kText, Text(*o, "content"), {}});
      request.messages.push_back(std::move(m));
    }
    // Resolving may read the database: on the blocking pool.
    blocking.Post([&models, &gateway, uuid, request = std::move(request),
                   answer = std::move(answer)]() mutable {
      auto route = models.Resolve(uuid);
      if (!route) return answer(tl::unexpected(route.error()));
      request.model = route->model_id;
      request.extra_args = route->extra_args;
      gateway.Chat(
          route->endpoint, std::move(request), nullptr,
          [answer, uuid](util::Result<domain::ChatResult> r) {
            if (!r) return answer(tl::unexpected(r.error()));
            answer(util::Json(util::JsonObject{
                {"content", r->content},
                {"model_uuid", uuid},
                {"usage", util::JsonObject{{"prompt_tokens", r->usage.prompt_tokens},
                                           {"completion_tokens", r->usage.completion_tokens},
                                           {"total_tokens", r->usage.total_tokens}}}}));
          });
    });
  };
}

plugins::PluginCallHandler MakeGetConfigFileCall(services::PluginConfigFiles& files,
                                                 util::BlockingExecutor& blocking) {
  return [&files, &blocking](const domain::PluginKey&, const util::JsonObject& data,
                             std::function<void(util::Result<util::Json>)> answer) {
    const std::string key = Text(data, "file_key");
    if (key.empty()) return answer(util::Fail(ErrorCode::kInvalidArgument, "file_key is required"));
    blocking.Post([&files, key, answer = std::move(answer)] {
      auto bytes = files.Load(key);
      if (!bytes) return answer(tl::unexpected(bytes.error()));
      answer(
          util::Json(util::JsonObject{{"file_base64", platforms::common::Base64Encode(*bytes)}}));
    });
  };
}

}  // namespace sb::app
