#include "platforms/webhook/webhook_adapter.hpp"

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <mutex>
#include <unordered_set>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/webhook/webhook_codec.hpp"
#include "util/call_once.hpp"

namespace sb::platforms::webhook {
namespace {

namespace asio = boost::asio;
using util::ErrorCode;

using common::ConfigString;
using SendDone = util::CallOnce<util::Result<domain::SendReceipt>>;

WebhookAnswer Envelope(int status, std::string_view msg) {
  util::JsonObject body{{"code", status == 200 ? 0 : -1}, {"msg", msg}};
  return {status, "application/json", util::SerializeJson(body)};
}

// A callback's failure as the API reports it; the URL's query may hold a token, so only the
// host is named.
util::Error DeliveryError(const util::Error& transport) {
  return {transport.code, "callback delivery failed: " + transport.message};
}

class WebhookAdapter final : public PlatformAdapter {
 public:
  explicit WebhookAdapter(AdapterContext context)
      : context_(std::move(context)),
        secret_(ConfigString(context_.config, "secret")),
        callback_url_(ConfigString(context_.config, "callback_url")),
        group_(CoroutineGroup::Make(context_.executor)) {}

  void Start() override {
    if (secret_.empty()) {
      context_.host->OnTrouble("no secret configured: every call would be refused");
      return;
    }
    // Nothing to connect: the backend calls us. The bot's own id, for At elements that mention
    // it in groups, is its uuid. Without a callback URL replies cannot go out, which the host
    // shows but which does not stop messages from coming in.
    context_.host->OnConnected(context_.bot_uuid);
    if (callback_url_.empty()) {
      context_.host->OnTrouble("no callback_url configured: replies cannot be delivered");
    }
  }

  void Stop(std::function<void()> stopped) override {
    if (stopping_.exchange(true)) return;
    group_->Close(std::move(stopped));
  }

  util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) const override {
    return webhook::CheckDeliverable(message);
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) override {
    if (callback_url_.empty()) {
      done(util::Fail(ErrorCode::kUpstreamFailed, "the bot has no callback_url configured"));
      return;
    }
    net::HttpRequest request;
    request.method = "POST";
    request.url = callback_url_;
    request.body = EncodeOutbound(message, context_.bot_uuid, reply_to_message_id);
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(context_.clock->Now().time_since_epoch())
            .count();
    request.headers.emplace_back("Content-Type", "application/json");
    request.headers.emplace_back(std::string(kTimestampHeader), std::to_string(now));
    request.headers.emplace_back(std::string(kSignatureHeader),
                                 SignTimestamped(secret_, now, request.body));
    request.timeouts.connect = std::chrono::seconds(10);
    request.timeouts.total = std::chrono::seconds(30);
    request.max_response_bytes = 64 * 1024;

    // `done` must run exactly once: from the coroutine, or here when the group is closed, or
    // (with kCancelled) when the coroutine ends without calling it (an exception, a cancel).
    auto shared_done = std::make_shared<SendDone>(std::move(done), [] {
      return util::Fail(ErrorCode::kCancelled, "the send was cancelled");
    });
    auto http = context_.http;
    const bool started = group_->Spawn([http, request = std::move(request),
                                        shared_done]() mutable -> asio::awaitable<void> {
      auto response = co_await http->Send(std::move(request));
      if (!response) {
        (*shared_done)(tl::unexpected(DeliveryError(response.error())));
        co_return;
      }
      if (response->status < 200 || response->status > 299) {
        (*shared_done)(util::Fail(
            ErrorCode::kUpstreamFailed,
            fmt::format("callback delivery failed: the callback answered {}", response->status)));
        co_return;
      }
      domain::SendReceipt receipt;
      (*shared_done)(receipt);
    });
    if (!started) (*shared_done)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) override {
    if (call.method != "POST") {
      answer(Envelope(405, "send messages with POST"));
      return;
    }
    // The signature comes before anything else: a forged call costs one HMAC, nothing more.
    if (!Verify(secret_, call.body, call.Header("x-switchboard-signature"),
                call.Header("x-switchboard-timestamp"), context_.clock->Now())) {
      answer(Envelope(401, "missing, stale or wrong signature"));
      return;
    }
    auto inbound = DecodeInbound(call.body);
    if (!inbound) {
      answer(Envelope(400, inbound.error().message));
      return;
    }
    if (stopping_) {
      answer(Envelope(409, "the bot is stopping"));
      return;
    }
    // A signed request can be replayed within the timestamp window; a retry after a lost answer
    // looks the same. Either way the message is handled once.
    if (!FirstSighting(inbound->message_id)) {
      answer(Envelope(200, "ok (already received)"));
      return;
    }
    ReceivedMessage message;
    message.chat_type = inbound->chat_type;
    message.chat_id = std::move(inbound->chat_id);
    message.sender_id = std::move(inbound->sender_id);
    message.sender_name = std::move(inbound->sender_name);
    message.message_id = inbound->message_id;
    message.chain.reserve(inbound->chain.size() + 1);
    domain::MessageElement source;
    source.type = domain::ElementType::kSource;
    source.id = std::move(inbound->message_id);
    message.chain.push_back(std::move(source));
    for (auto& element : inbound->chain) message.chain.push_back(std::move(element));
    context_.host->OnMessage(std::move(message));
    answer(Envelope(200, "ok"));
  }

 private:
  // True the first time `message_id` is seen among the last kRemembered ids.
  bool FirstSighting(const std::string& message_id) {
    constexpr std::size_t kRemembered = 10'000;
    std::lock_guard lock(seen_mu_);
    if (!seen_.insert(message_id).second) return false;
    seen_order_.push_back(message_id);
    if (seen_order_.size() > kRemembered) {
      seen_.erase(seen_order_.front());
      seen_order_.pop_front();
    }
    return true;
  }

  AdapterContext context_;
  const std::string secret_;
  const std::string callback_url_;
  std::shared_ptr<CoroutineGroup> group_;
  std::atomic<bool> stopping_{false};
  std::mutex seen_mu_;
  std::unordered_set<std::string> seen_;  // guarded by seen_mu_
  std::deque<std::string> seen_order_;    // guarded by seen_mu_
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeWebhookAdapter(AdapterContext context) {
  return std::make_unique<WebhookAdapter>(std::move(context));
}

}  // namespace sb::platforms::webhook
