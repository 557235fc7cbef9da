#include <fmt/format.h>

#include <limits>
#include <memory>

#include "domain/message_json.hpp"
#include "domain/platform_socket.hpp"
#include "http/api/api.hpp"
#include "http/api/encoders.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"
#include "http/api/monogram_icon.hpp"
#include "services/config_schema.hpp"

namespace sb::http::api {
namespace {

constexpr int kMaxLogPage = 1000;

// `config` or its LangBot alias `adapter_config`.
std::optional<util::JsonObject> ReadConfig(FieldReader& body) {
  auto config = body.OptionalObject("config");
  if (!config) config = body.OptionalObject("adapter_config");
  return config;
}

// Optional per-bot log retention; the range is the service's rule.
std::optional<int> ReadRetention(FieldReader& body) {
  auto value = body.OptionalInt("log_retention");
  if (!value) return std::nullopt;
  if (*value < 0 || *value > std::numeric_limits<int>::max()) {
    body.Set("log_retention is out of range");
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

// The send_message body, checked in the seed's order; each failure names the field.
util::Result<domain::OutgoingMessage> DecodeOutgoing(const Request& req) {
  auto body = FieldReader::Parse(req.body);
  if (!body) return tl::unexpected(body.error());
  auto fail = [](std::string m) { return util::Fail(util::ErrorCode::kInvalidArgument, m); };
  domain::OutgoingMessage msg;
  const std::string target_type = body->RequiredString("target_type");
  if (auto e = body->error()) return tl::unexpected(*e);
  if (target_type == "person") {
    msg.target_type = domain::TargetType::kPerson;
  } else if (target_type == "group") {
    msg.target_type = domain::TargetType::kGroup;
  } else {
    return fail("target_type must be person or group");
  }
  msg.target_id = body->RequiredString("target_id");
  if (auto e = body->error()) return tl::unexpected(*e);
  if (msg.target_id.empty()) return fail("target_id must not be empty");
  auto chain = domain::DecodeMessageChain(body->object(), "message_chain");
  if (!chain) return tl::unexpected(chain.error());
  msg.chain = std::move(*chain);
  return msg;
}

// As providers' keys: shown unless `include_secret=false`, then the adapter's secret items
// (tokens, signing secrets) are masked.
services::BotView Shown(services::BotView v, const domain::Catalogue& adapters,
                        const Request& req) {
  if (QueryFlag(req, "include_secret", true)) return v;
  if (const auto* adapter = adapters.Find(v.bot.adapter)) {
    v.bot.adapter_config = services::MaskSecretItems(domain::ConfigItems(adapter->descriptor),
                                                     std::move(v.bot.adapter_config));
  }
  return v;
}

// What the bot's adapter sees of a call to its URL. Moves the body out of `req`.
domain::PlatformCall ToPlatformCall(Request& req) {
  domain::PlatformCall call;
  call.method = req.method;
  // fmt, not "/" + std::string(rest): GCC 12 warns falsely about that (bug 105329).
  if (auto rest = req.PathParam("path"); !rest.empty()) call.path = fmt::format("/{}", rest);
  call.query = req.query;
  call.headers = req.headers;
  call.body = std::move(req.body);
  call.remote_address = req.remote_address;
  return call;
}

// Our side of an accepted WebSocket as a bot's adapter sees it.
class PeerSocket final : public domain::PlatformSocket {
 public:
  explicit PeerSocket(std::shared_ptr<WebSocketPeer> peer) : peer_(std::move(peer)) {}
  void SendText(std::string text) override { peer_->SendText(std::move(text)); }
  void Close(int code, std::string reason) override { peer_->CloseWith(code, std::move(reason)); }

 private:
  const std::shared_ptr<WebSocketPeer> peer_;
};

}  // namespace

void RegisterBotRoutes(Router& router, ApiContext& ctx) {
  router.Add({"GET", "/api/v1/platform/adapters", AuthClass::kEither, [&ctx](Request&) {
                util::JsonArray out;
                for (const auto& e : ctx.adapters.entries()) out.push_back(e.descriptor);
                return JsonOk(util::JsonObject{{"adapters", std::move(out)}});
              }});

  router.Add({"GET", "/api/v1/platform/adapters/{name}", AuthClass::kEither, [&ctx](Request& req) {
                const auto* e = ctx.adapters.Find(req.PathParam("name"));
                if (!e) {
                  return Fail(req, {util::ErrorCode::kNotFound,
                                    fmt::format("adapter '{}' does not exist",
                                                req.PathParam("name").substr(0, 64))});
                }
                return JsonOk(util::JsonObject{{"adapter", e->descriptor}});
              }});
  // Public, as in LangBot: the console shows it in an <img>, which sends no credential.
  router.Add({"GET", "/api/v1/platform/adapters/{name}/icon", AuthClass::kNone,
              [&ctx](Request& req) {
                const auto* e = ctx.adapters.Find(req.PathParam("name"));
                if (!e) return Fail(req, {util::ErrorCode::kNotFound, "adapter not found"});
                return MonogramResponse(*e);
              },
              Execution::kInline});

  router.Add({"GET", "/api/v1/platform/bots", AuthClass::kEither, [&ctx](Request& req) {
                auto list = ctx.bots.List();
                if (!list) return Fail(req, list.error());
                util::JsonArray out;
                out.reserve(list->size());
                for (auto& b : *list) {
                  out.push_back(EncodeBot(Shown(std::move(b), ctx.adapters, req), nullptr));
                }
                return JsonOk(util::JsonObject{{"bots", std::move(out)}});
              }});

  router.Add({"POST", "/api/v1/platform/bots", AuthClass::kEither, [&ctx](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                services::BotDraft d;
                d.name = body->RequiredString("name");
                d.adapter = body->RequiredString("adapter");
                auto config = ReadConfig(*body);
                if (!config && !body->error()) body->Set("config is required");
                d.description = body->OptionalString("description").value_or("");
                d.enable = body->OptionalBool("enable").value_or(false);
                d.use_pipeline_uuid = body->OptionalId<util::PipelineId>("use_pipeline_uuid");
                d.log_retention = ReadRetention(*body);
                if (auto e = body->error()) return Fail(req, *e);
                d.config = std::move(*config);
                auto id = ctx.bots.Create(d);
                if (!id) return Fail(req, id.error());
                return JsonOk(util::JsonObject{{"uuid", id->str()}});
              }});

  router.Add({"GET", "/api/v1/platform/bots/{bot_uuid}", AuthClass::kEither, [&ctx](Request& req) {
                auto id = PathId<util::BotId>(req, "bot_uuid");
                if (!id) return Fail(req, id.error());
                auto bot = ctx.bots.Get(*id);
                if (!bot) return Fail(req, bot.error());
                const WebhookPrefixes prefixes{ctx.options.webhook_prefix,
                                               ctx.options.extra_webhook_prefix};
                return JsonOk(util::JsonObject{
                    {"bot", EncodeBot(Shown(std::move(*bot), ctx.adapters, req), &prefixes)}});
              }});

  router.Add({"PUT", "/api/v1/platform/bots/{bot_uuid}", AuthClass::kEither, [&ctx](Request& req) {
                auto id = PathId<util::BotId>(req, "bot_uuid");
                if (!id) return Fail(req, id.error());
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                services::BotPatch p;
                p.name = body->OptionalString("name");
                p.description = body->OptionalString("description");
                p.adapter = body->OptionalString("adapter");
                p.config = ReadConfig(*body);
                p.enable = body->OptionalBool("enable");
                p.use_pipeline_uuid = body->OptionalId<util::PipelineId>("use_pipeline_uuid");
                p.log_retention = ReadRetention(*body);
                if (auto e = body->error()) return Fail(req, *e);
                auto r = ctx.bots.Update(*id, p);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});

  router.Add(
      {"DELETE", "/api/v1/platform/bots/{bot_uuid}", AuthClass::kEither, [&ctx](Request& req) {
         auto id = PathId<util::BotId>(req, "bot_uuid");
         if (!id) return Fail(req, id.error());
         auto r = ctx.bots.Delete(*id);
         if (!r) return Fail(req, r.error());
         return JsonOkNoData();
       }});

  router.Add(
      {"POST", "/api/v1/platform/bots/{bot_uuid}/logs", AuthClass::kEither, [&ctx](Request& req) {
         auto id = PathId<util::BotId>(req, "bot_uuid");
         if (!id) return Fail(req, id.error());
         auto body = FieldReader::Parse(req.body, /*empty_ok=*/true);
         if (!body) return Fail(req, body.error());
         const auto from = body->OptionalInt("from_index").value_or(-1);
         const auto max = body->OptionalInt("max_count").value_or(10);
         if (auto e = body->error()) return Fail(req, *e);
         if (from < -1) {
           return Fail(req, {util::ErrorCode::kInvalidArgument,
                             "from_index must be -1 (newest) or a non-negative integer"});
         }
         if (max < 0 || max > kMaxLogPage) {
           return Fail(req, {util::ErrorCode::kInvalidArgument,
                             fmt::format("max_count must be between 0 and {}", kMaxLogPage)});
         }
         auto page = ctx.bots.Logs(*id, from, static_cast<int>(max));
         if (!page) return Fail(req, page.error());
         util::JsonArray logs;
         for (const auto& e : page->entries) logs.push_back(EncodeLogEntry(e));
         return JsonOk(
             util::JsonObject{{"logs", std::move(logs)}, {"total_count", page->total_count}});
       }});

  // send_message answers when the platform did: an async route, so no thread waits with it.
  Route send{"POST", "/api/v1/platform/bots/{bot_uuid}/send_message", AuthClass::kApiKeyOnly,
             nullptr};
  send.async_handler = [&ctx](Request& req, Respond respond) {
    auto id = PathId<util::BotId>(req, "bot_uuid");
    if (!id) return respond(Fail(req, id.error()));
    auto msg = DecodeOutgoing(req);
    if (!msg) return respond(Fail(req, msg.error()));
    const std::string request_id = req.request_id;
    ctx.bots.SendMessage(*id, *msg, [respond, request_id](util::Result<domain::SendReceipt> sent) {
      if (!sent) return respond(JsonError(sent.error(), request_id));
      util::JsonObject data{{"sent", true}};
      if (sent->message_id) data["message_id"] = *sent->message_id;
      respond(JsonOk(data));
    });
  };
  router.Add(std::move(send));

  // Platform webhooks: the adapter of the running bot verifies the platform's own signature
  // before anything else; it answers from the I/O thread, so a slow pipeline holds no thread.
  auto webhook = [&ctx](Request& req, Respond respond) {
    auto id = PathId<util::BotId>(req, "bot_uuid");
    if (!id) return respond(Fail(req, id.error()));
    ctx.bots.HandlePlatformCall(
        *id, ToPlatformCall(req),
        [respond, request_id = req.request_id](util::Result<domain::PlatformAnswer> answer) {
          if (!answer) return respond(JsonError(answer.error(), request_id));
          Response res;
          res.status = answer->status;
          res.content_type = std::move(answer->content_type);
          res.body = std::move(answer->body);
          for (auto& header : answer->headers) res.headers.push_back(std::move(header));
          respond(std::move(res));
        });
  };
  // A WebSocket upgrade on a bot's URL goes to its adapter too (the web page bot's visitors);
  // adapters that take none refuse it (404).
  auto socket = [&ctx](Request& req,
                       std::shared_ptr<WebSocketPeer> peer) -> util::Result<WebSocketHandlers> {
    auto id = PathId<util::BotId>(req, "bot_uuid");
    if (!id) return tl::unexpected(id.error());
    auto platform_socket = std::make_shared<PeerSocket>(std::move(peer));
    auto handlers = ctx.bots.OpenPlatformSocket(*id, ToPlatformCall(req), platform_socket);
    if (!handlers) return tl::unexpected(handlers.error());
    return WebSocketHandlers{std::move(handlers->on_text), std::move(handlers->on_close)};
  };
  for (const char* method : {"GET", "POST"}) {
    Route root{method, "/bots/{bot_uuid}", AuthClass::kNone, nullptr};
    root.async_handler = webhook;
    if (root.method == "GET") root.websocket = socket;
    router.Add(std::move(root));
    Route sub{method, "/bots/{bot_uuid}/{path...}", AuthClass::kNone, nullptr};
    sub.async_handler = webhook;
    if (sub.method == "GET") sub.websocket = socket;
    router.Add(std::move(sub));
  }
}

}  // namespace sb::http::api
