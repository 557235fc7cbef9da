// The console's pipeline debug chat (LangBot's paths): a WebSocket at
// /api/v1/pipelines/{uuid}/ws/connect?session_type=person|group, plus the chat's messages and a
// reset over plain HTTP. The protocol itself is the runtime's (runtime/debug_chat.hpp).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/api/api.hpp"
#include "http/api/encoders.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"

namespace sb::http::api {
namespace {

bool IsLoopbackOrigin(std::string_view origin) {
  for (std::string_view host : {"localhost", "127.0.0.1", "[::1]"}) {
    for (std::string_view scheme : {"http://", "https://"}) {
      if (origin.size() < scheme.size() + host.size() ||
          origin.substr(0, scheme.size()) != scheme ||
          origin.substr(scheme.size(), host.size()) != host) {
        continue;
      }
      const std::string_view rest = origin.substr(scheme.size() + host.size());
      if (rest.empty() || rest.front() == ':') return true;
    }
  }
  return false;
}

bool SameOrigin(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// api.anonymous_debug_chat. "loopback" admits a client on this machine whose page (if it is a
// browser) is on this machine too: without the Origin check, any website the operator visits
// could open the chat from their browser. An origin admits a browser page served there; a
// non-browser client can claim any Origin, so that entry admits whoever can reach the server.
std::function<bool(const Request&)> AnonymousDebugChatRule(std::vector<std::string> from) {
  if (from.empty()) return nullptr;
  return [from = std::move(from)](const Request& req) {
    const std::string_view origin = req.Header("origin");
    for (const std::string& entry : from) {
      const bool admitted = entry == "loopback"
                                ? req.from_loopback && (origin.empty() || IsLoopbackOrigin(origin))
                                : !origin.empty() && SameOrigin(origin, entry);
      if (admitted) {
        spdlog::info(
            "debug chat opened without a credential from {} (api.anonymous_debug_chat: {})",
            req.remote_address, entry);
        return true;
      }
    }
    return false;
  };
}

}  // namespace

void RegisterDebugChatRoutes(Router& router, ApiContext& ctx) {
  if (ctx.debug_chat == nullptr) return;  // CLI tools and tests without a runtime
  domain::DebugChat& chat = *ctx.debug_chat;

  Route connect{"GET", "/api/v1/pipelines/{pipeline_uuid}/ws/connect", AuthClass::kEither, nullptr};
  connect.websocket = [&chat](
                          Request& req,
                          std::shared_ptr<WebSocketPeer> peer) -> util::Result<WebSocketHandlers> {
    auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
    if (!id) return tl::unexpected(id.error());
    const std::string type(req.Query("session_type").value_or("person"));
    auto connection = chat.Connect(
        *id, type, [peer](std::string frame) { peer->SendText(std::move(frame)); },
        [peer] { peer->Close(); });
    if (!connection) return tl::unexpected(connection.error());
    std::shared_ptr<domain::DebugChatConnection> c = *connection;
    WebSocketHandlers handlers;
    handlers.on_text = [c](std::string text) { c->OnText(std::move(text)); };
    handlers.on_close = [c] { c->OnClose(); };
    return handlers;
  };
  connect.admit_anonymous = AnonymousDebugChatRule(ctx.options.anonymous_debug_chat);
  router.Add(std::move(connect));

  router.Add({"GET", "/api/v1/pipelines/{pipeline_uuid}/ws/messages/{session_type}",
              AuthClass::kEither, [&chat](Request& req) {
                auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
                if (!id) return Fail(req, id.error());
                auto messages = chat.Messages(*id, std::string(req.PathParam("session_type")));
                if (!messages) return Fail(req, messages.error());
                return JsonOk(util::JsonObject{{"messages", std::move(*messages)}});
              }});

  router.Add({"POST", "/api/v1/pipelines/{pipeline_uuid}/ws/reset/{session_type}",
              AuthClass::kEither, [&chat](Request& req) {
                auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
                if (!id) return Fail(req, id.error());
                auto reset = chat.Reset(*id, std::string(req.PathParam("session_type")));
                if (!reset) return Fail(req, reset.error());
                return JsonOk(util::JsonObject{{"message", "Session reset successfully"}});
              }});

  router.Add(
      {"GET", "/api/v1/pipelines/{pipeline_uuid}/ws/connections", AuthClass::kEither,
       [&chat](Request& req) {
         auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
         if (!id) return Fail(req, id.error());
         auto connections = chat.Connections(*id);
         if (!connections) return Fail(req, connections.error());
         util::JsonArray list;
         for (const auto& c : *connections) {
           list.push_back(util::JsonObject{{"connection_id", c.connection_id},
                                           {"session_type", c.session_type},
                                           {"created_at", util::FormatRfc3339(c.created_at)},
                                           {"last_active", util::FormatRfc3339(c.last_active)},
                                           {"is_active", true}});
         }
         const domain::DebugChatStats stats = chat.Stats();
         util::JsonObject by_pipeline;
         for (const auto& [k, n] : stats.by_pipeline) by_pipeline[k] = n;
         util::JsonObject by_type;
         for (const auto& [k, n] : stats.by_session_type) by_type[k] = n;
         return JsonOk(util::JsonObject{
             {"stats", util::JsonObject{{"total_connections", stats.total_connections},
                                        {"pipelines", stats.by_pipeline.size()},
                                        {"connections_by_pipeline", std::move(by_pipeline)},
                                        {"connections_by_session_type", std::move(by_type)}}},
             {"connections", std::move(list)}});
       }});

  router.Add(
      {"POST", "/api/v1/pipelines/{pipeline_uuid}/ws/broadcast", AuthClass::kEither,
       [&chat](Request& req) {
         auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
         if (!id) return Fail(req, id.error());
         auto body = FieldReader::Parse(req.body);
         if (!body) return Fail(req, body.error());
         const util::Json* message = body->object().if_contains("message");
         // LangBot refuses a missing or empty message (any falsy value).
         if (message == nullptr || message->is_null() ||
             (message->is_string() && message->get_string().empty())) {
           return Fail(req, util::Error{util::ErrorCode::kInvalidArgument, "message is required"});
         }
         auto sent = chat.Broadcast(*id, *message);
         if (!sent) return Fail(req, sent.error());
         return JsonOk(
             util::JsonObject{{"message", "Broadcast sent successfully"}, {"connections", *sent}});
       }});
}

}  // namespace sb::http::api
