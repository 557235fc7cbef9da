#include "platforms/qqofficial/qqofficial_adapter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/this_coro.hpp>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/acknowledge.hpp"
#include "platforms/common/adapter_core.hpp"
#include "platforms/common/clock_waits.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/ed25519.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/qqofficial/qqofficial_codec.hpp"
#include "platforms/qqofficial/qqofficial_gateway.hpp"
#include "platforms/qqofficial/qqofficial_rest.hpp"

namespace sb::platforms::qqofficial {
namespace {

namespace asio = boost::asio;
using domain::ElementType;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::string_view kDefaultApiBase = "https://api.sgroup.qq.com";
constexpr std::string_view kDefaultTokenBase = "https://bots.qq.com";
constexpr std::size_t kMaxBodyBytes = 1024 * 1024;  // LangBot's callback limit too
constexpr std::size_t kRememberedEvents = 10'000;   // callback event ids and message ids
constexpr std::size_t kRememberedAnchors = 4096;    // msg_id -> msg_seq counter
constexpr std::size_t kRememberedChats = 4096;      // chat -> route and latest msg_id
constexpr std::size_t kMaxImageBytes = 10 * 1024 * 1024;

WebhookAnswer Answer(int status, std::string_view message) {
  util::JsonObject body;
  body["code"] = status == 200 ? 0 : -1;
  body["message"] = message;
  return {status, "application/json", util::SerializeJson(body)};
}

WebhookAnswer Ack() { return {200, "application/json", EncodeCallbackAck()}; }

std::string ChatKey(domain::TargetType type, const std::string& chat_id) {
  return (type == domain::TargetType::kPerson ? "p:" : "g:") + chat_id;
}

class Core : public common::AdapterCore<Core> {
 public:
  explicit Core(AdapterContext context)
      : AdapterCore(std::move(context)),
        appid_(common::ConfigString(context_.config, "appid")),
        secret_(common::ConfigString(context_.config, "secret")),
        webhook_(common::ConfigBool(context_.config, "enable-webhook", false)),
        api_base_(common::ConfigBaseUrl(context_.config, "api_base_url", kDefaultApiBase)),
        // The token lives on another host; a configured base (a proxy, a test fake) serves both.
        token_base_(api_base_ == kDefaultApiBase ? std::string(kDefaultTokenBase) : api_base_),
        rest_(context_, appid_, secret_, api_base_, token_base_),
        gateway_(context_, rest_,
                 GatewayEvents{.dispatch = [this](const Payload& p) { OnDispatch(p); },
                               .ready = [this](const ReadyInfo& r) { OnReady(r); },
                               .resumed = [this] { OnResumed(); }}),
        callbacks_(kRememberedEvents),
        messages_(kRememberedEvents) {}

  void Start() {
    auto self = shared_from_this();
    // Webhook mode checks the credentials by fetching a token; WebSocket mode runs the gateway.
    StartIfMet(
        {{!appid_.empty() && !secret_.empty(),
          "appid and secret are required: copy them from the QQ open platform (q.qq.com)"},
         {webhook_ || context_.websockets != nullptr,
          "this server has no WebSocket transport for the QQ gateway"}},
        webhook_ ? std::function<asio::awaitable<void>()>([self] { return self->SignIn(); })
                 : [self] { return self->gateway_.Run(); });
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = common::MakeSendOnce(std::move(done));
    const Route route = RouteOf(message.target_type, message.target_id);
    auto parts = EncodeParts(message, route);
    if (!parts) {
      (*once)(tl::unexpected(parts.error()));
      return;
    }
    auto shared_parts = std::make_shared<const std::vector<Part>>(std::move(*parts));
    auto anchor = AnchorFor(reply_to_message_id, message.target_type, message.target_id);
    auto self = shared_from_this();
    SpawnSend(once, [self, route, target = message.target_id, shared_parts, anchor, once]() {
      return self->rest_.SendAll(route, target, shared_parts, anchor, once);
    });
  }

  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    if (!webhook_) {
      answer(Answer(404, "this bot uses the QQ WebSocket gateway (enable-webhook is off)"));
      return;
    }
    if (call.method != "POST") {
      answer(Answer(405, "use POST"));
      return;
    }
    if (call.body.size() > kMaxBodyBytes) {
      answer(Answer(413, "the body is too large"));
      return;
    }
    // A signed call is checked before anything else: a forged one costs one verification.
    const std::string_view signature = call.Header("x-signature-ed25519");
    const bool signed_call = !signature.empty();
    if (signed_call) {
      const std::string message = std::string(call.Header("x-signature-timestamp")) + call.body;
      if (!common::QqBotVerify(secret_, message, signature)) {
        answer(Answer(401, "wrong X-Signature-Ed25519"));
        return;
      }
    }
    auto payload = DecodePayload(call.body);
    if (!payload) {
      Log(LogLevel::kWarning, "refused a malformed QQ callback: " + payload.error().message);
      answer(Answer(400, payload.error().message));
      return;
    }
    if (payload->op == kOpValidation) {
      // Answered signed or not (the docs do not say QQ signs it); DecodeValidation's charset
      // keeps the answer from signing anything that could pass for a callback body.
      AnswerValidation(*payload, answer);
      return;
    }
    if (!signed_call) {
      answer(Answer(401, "missing X-Signature-Ed25519"));
      return;
    }
    if (payload->op != kOpDispatch) {
      answer(Ack());
      return;
    }
    std::string id = payload->id;
    if (id.empty() && payload->d.is_object()) {
      if (const auto* d_id = payload->d.get_object().if_contains("id"); d_id && d_id->is_string()) {
        id = std::string(d_id->get_string());
      }
    }
    if (!callbacks_.FirstSighting(id)) {  // QQ retries a callback it thinks was lost
      answer(Ack());
      return;
    }
    if (stopping()) {
      callbacks_.Forget(id);
      answer(Answer(503, "the bot is stopping"));
      return;
    }
    auto self = shared_from_this();
    auto work = [self, p = std::move(*payload)]() { return self->DeliverLater(p); };
    if (!common::AcknowledgeThenRun(*group_, std::move(work), answer, Ack(),
                                    Answer(503, "the bot is stopping"))) {
      callbacks_.Forget(id);
    }
  }

 private:
  std::string Scrub(std::string text) const override { return rest_.Scrub(std::move(text)); }

  void AnswerValidation(const Payload& payload, const std::function<void(WebhookAnswer)>& answer) {
    auto validation = DecodeValidation(payload.d);
    if (!validation) {
      Log(LogLevel::kWarning,
          "refused a malformed QQ callback validation: " + validation.error().message);
      answer(Answer(400, validation.error().message));
      return;
    }
    auto signature = common::QqBotSign(secret_, validation->event_ts + validation->plain_token);
    if (!signature) {
      answer(Answer(500, "cannot sign the validation"));
      return;
    }
    Log(LogLevel::kInfo, "answered QQ's callback URL validation (op 13)");
    answer({200, "application/json", EncodeValidationAnswer(validation->plain_token, *signature)});
  }

  // Webhook mode: the credentials are checked once by fetching a token; the bot's account id is
  // its appid (LangBot's bot_account_id), which the @ events' At elements name.
  asio::awaitable<void> SignIn() {
    co_await asio::this_coro::throw_if_cancelled(false);
    common::ReconnectBackoff backoff;
    for (;;) {
      auto token = co_await rest_.Token();
      if (token) {
        context_.host->OnConnected(appid_);
        Log(LogLevel::kInfo,
            fmt::format("QQ app {} signed in; waiting for QQ's callbacks (webhook mode)", appid_));
        co_return;
      }
      if (token.error().code == ErrorCode::kCancelled) co_return;
      if (token.error().final) {
        context_.host->OnTrouble(token.error().message +
                                 "; fix the appid and secret and save the bot to try again");
        co_return;
      }
      const auto delay = backoff.NextDelay(context_.clock->Now());
      context_.host->OnTrouble(
          fmt::format("{}; {}", token.error().message, backoff.Describe(delay)));
      if (!co_await common::Sleep(*context_.clock, delay)) co_return;
    }
  }

  void OnReady(const ReadyInfo& ready) {
    {
      std::lock_guard lock(mu_);
      bot_user_id_ = ready.user_id;
    }
    context_.host->OnConnected(appid_);
    Log(LogLevel::kInfo,
        fmt::format("connected to the QQ gateway as {} ({})", ready.username, ready.user_id));
  }

  void OnResumed() {
    context_.host->OnConnected(appid_);
    Log(LogLevel::kInfo, "resumed the QQ gateway session");
  }

  std::string BotUserId() {
    std::lock_guard lock(mu_);
    return bot_user_id_;
  }

  // The work of an acknowledged callback (its parameter is copied into the coroutine).
  asio::awaitable<void> DeliverLater(Payload payload) {
    OnDispatch(payload);
    co_return;
  }

  void OnDispatch(const Payload& payload) {
    auto decoded = DecodeEvent(payload.t, payload.d, appid_, BotUserId());
    if (!decoded) {
      Log(LogLevel::kWarning,
          fmt::format("skipped a malformed QQ {} event: {}", payload.t, decoded.error().message));
      return;
    }
    if (!decoded->message) {
      Log(LogLevel::kDebug, "ignored " + decoded->skipped);
      return;
    }
    domain::ReceivedMessage& message = *decoded->message;
    // A resumed session or a retried callback may bring a message again.
    if (!messages_.FirstSighting(message.message_id)) return;
    Remember(message, decoded->route);
    const bool has_image =
        std::any_of(message.chain.begin(), message.chain.end(),
                    [](const domain::MessageElement& e) { return e.type == ElementType::kImage; });
    if (!has_image) {
      context_.host->OnMessage(std::move(message));
      return;
    }
    // Fetched apart from the gateway's read loop, so a slow image host holds up nothing else.
    auto self = shared_from_this();
    group_->Spawn([self, m = std::move(message)]() { return self->FetchImagesThenDeliver(m); });
  }

  // QQ's attachment URLs expire and some model providers cannot fetch them, so the images are
  // handed on as bytes (as LangBot does); an image that cannot be fetched keeps its URL.
  asio::awaitable<void> FetchImagesThenDeliver(domain::ReceivedMessage message) {
    co_await asio::this_coro::throw_if_cancelled(false);
    for (domain::MessageElement& e : message.chain) {
      if (e.type != ElementType::kImage || e.url.empty()) continue;
      net::HttpRequest request;
      request.method = "GET";
      request.url = e.url;  // QQ's CDN; no credentials go with it
      request.max_response_bytes = kMaxImageBytes;
      request.timeouts.connect = std::chrono::seconds(10);
      request.timeouts.total = std::chrono::seconds(60);
      auto response = co_await context_.http->Send(std::move(request));
      if (!response && response.error().code == ErrorCode::kCancelled) co_return;
      std::string why;
      if (!response) {
        why = response.error().message;
      } else if (response->status != 200 || response->body.empty()) {
        why = fmt::format("HTTP {}", response->status);
      } else {
        std::string mime(response->Header("content-type"));
        if (const auto semi = mime.find(';'); semi != std::string::npos) mime.resize(semi);
        if (!mime.starts_with("image/") || mime.size() > 100) mime = "image/png";
        e.base64 = "data:" + mime + ";base64," + common::Base64Encode(response->body);
        e.url.clear();
        continue;
      }
      Log(LogLevel::kWarning,
          fmt::format("passed an image of QQ message {} on by URL: {}", message.message_id, why));
    }
    context_.host->OnMessage(std::move(message));
  }

  struct Chat {
    Route route = Route::kC2c;
    std::shared_ptr<ReplyAnchor> latest;
    util::TimePoint latest_at{};
  };

  void Remember(const domain::ReceivedMessage& message, Route route) {
    auto anchor = std::make_shared<ReplyAnchor>();
    anchor->msg_id = message.message_id;
    const std::string key = ChatKey(message.chat_type, message.chat_id);
    std::lock_guard lock(mu_);
    if (anchors_.emplace(message.message_id, anchor).second) {
      anchor_order_.push_back(message.message_id);
    }
    while (anchor_order_.size() > kRememberedAnchors) {
      anchors_.erase(anchor_order_.front());
      anchor_order_.pop_front();
    }
    if (!chats_.contains(key)) chat_order_.push_back(key);
    chats_[key] = Chat{route, anchor, context_.clock->Now()};
    while (chat_order_.size() > kRememberedChats) {
      chats_.erase(chat_order_.front());
      chat_order_.pop_front();
    }
  }

  Route RouteOf(domain::TargetType type, const std::string& target) {
    std::lock_guard lock(mu_);
    if (auto it = chats_.find(ChatKey(type, target)); it != chats_.end()) return it->second.route;
    return RouteFor(type, target);
  }

  // The received message a send answers: the one it replies to, else (send_message) the chat's
  // latest while QQ still takes passive replies to it; null for a proactive message.
  std::shared_ptr<ReplyAnchor> AnchorFor(const std::string& reply_to, domain::TargetType type,
                                         const std::string& target) {
    std::lock_guard lock(mu_);
    if (!reply_to.empty()) {
      if (auto it = anchors_.find(reply_to); it != anchors_.end()) return it->second;
    }
    auto it = chats_.find(ChatKey(type, target));
    if (it == chats_.end() || !it->second.latest) return nullptr;
    const auto window = it->second.route == Route::kC2c ? kC2cReplyWindow : kGroupReplyWindow;
    if (context_.clock->Now() - it->second.latest_at >= window) return nullptr;
    if (it->second.latest->last_seq.load() >= kMaxPassiveReplies) return nullptr;
    return it->second.latest;
  }

  const std::string appid_;
  const std::string secret_;
  const bool webhook_;
  const std::string api_base_;
  const std::string token_base_;
  QqRest rest_;
  QqGateway gateway_;
  common::RecentIds callbacks_;  // callback event ids (webhook mode)
  common::RecentIds messages_;   // message ids (both modes)

  std::mutex mu_;
  std::string bot_user_id_;                                                // guarded by mu_
  std::unordered_map<std::string, std::shared_ptr<ReplyAnchor>> anchors_;  // guarded by mu_
  std::deque<std::string> anchor_order_;                                   // guarded by mu_
  std::unordered_map<std::string, Chat> chats_;                            // guarded by mu_
  std::deque<std::string> chat_order_;                                     // guarded by mu_
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeQqOfficialAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::qqofficial
