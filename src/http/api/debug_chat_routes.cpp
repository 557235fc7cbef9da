// The console's pipeline debug chat (LangBot's paths): a WebSocket at
// /api/v1/pipelines/{uuid}/ws/connect?session_type=person|group, plus the chat's messages and a
// reset over plain HTTP. The protocol itself is the runtime's (runtime/debug_chat.hpp).
#include <memory>
#include <string>

#include "http/api/api.hpp"
#include "http/api/encoders.hpp"
#include "http/api/handler_support.hpp"

namespace sb::http::api {

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
}

}  // namespace sb::http::api
