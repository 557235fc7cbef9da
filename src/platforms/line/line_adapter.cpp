#include "platforms/line/line_adapter.hpp"

#include <fmt/format.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/acknowledge.hpp"
#include "platforms/common/adapter_core.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/rest_call.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/line/line_codec.hpp"
#include "util/call_once.hpp"
#include "util/ids.hpp"

namespace sb::platforms::line {
namespace {

namespace asio = boost::asio;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::string_view kDefaultBase = "https://api.line.me";
constexpr std::string_view kDefaultDataBase = "https://api-data.line.me";
constexpr std::size_t kMaxBodyBytes = 1024 * 1024;
constexpr std::size_t kRememberedEvents = 10'000;  // webhookEventIds
constexpr std::size_t kRememberedTokens = 4096;    // message id -> reply token
// Images users send are fetched so the model can see them; bigger ones are left out.
constexpr std::size_t kMaxContentBytes = 10 * 1024 * 1024;

WebhookAnswer Answer(int status, std::string_view message) {
  util::JsonObject body;
  if (!message.empty()) body["message"] = message;
  return {status, "application/json", util::SerializeJson(body)};
}

using common::SendOnce;

class Core : public common::AdapterCore<Core> {
 public:
  explicit Core(AdapterContext context)
      : AdapterCore(std::move(context)),
        token_(common::ConfigString(context_.config, "channel_access_token")),
        secret_(common::ConfigString(context_.config, "channel_secret")),
        base_(common::ConfigBaseUrl(context_.config, "api_base_url", kDefaultBase)),
        // Media lives on another host; a configured base (a proxy, a test fake) serves both.
        data_base_(base_ == kDefaultBase ? std::string(kDefaultDataBase) : base_),
        events_(kRememberedEvents) {}

  void Start() {
    StartIfMet(
        {{!secret_.empty(), "no channel_secret configured: every webhook call would be refused"},
         {!token_.empty(), "no channel_access_token configured: replies cannot be sent"}},
        [self = shared_from_this()]() { return self->SignIn(); });
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = common::MakeSendOnce(std::move(done));
    auto messages = std::make_shared<const std::vector<util::JsonObject>>(EncodeMessages(message));
    std::string reply_token = TakeReplyToken(reply_to_message_id);
    auto self = shared_from_this();
    SpawnSend(once, [self, messages, to = message.target_id, reply_token = std::move(reply_token),
                     once]() { return self->SendAll(messages, to, reply_token, once); });
  }

  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    if (call.method != "POST") {
      answer(Answer(405, "use POST"));
      return;
    }
    if (call.body.size() > kMaxBodyBytes) {
      answer(Answer(413, "the body is too large"));
      return;
    }
    // The signature comes before anything else: a forged call costs one HMAC.
    if (!Verify(secret_, call.body, call.Header("x-line-signature"))) {
      answer(Answer(401, "missing or wrong X-Line-Signature"));
      return;
    }
    auto hook = DecodeWebhook(call.body);
    if (!hook) {
      Log(LogLevel::kWarning, "refused a malformed LINE webhook call: " + hook.error().message);
      answer(Answer(400, hook.error().message));
      return;
    }
    // Redelivered events (deliveryContext.isRedelivery) and replays carry the same id.
    std::vector<util::Json> fresh;
    std::vector<std::string> fresh_ids;
    for (auto& event : hook->events) {
      std::string id = EventId(event);
      if (!events_.FirstSighting(id)) continue;
      fresh_ids.push_back(std::move(id));
      fresh.push_back(std::move(event));
    }
    if (fresh.empty()) {  // the console's Verify call, or only repeats
      answer(Answer(200, ""));
      return;
    }
    if (stopping()) {
      for (const auto& id : fresh_ids) events_.Forget(id);
      answer(Answer(503, "the bot is stopping"));
      return;
    }
    auto self = shared_from_this();
    auto work = [self, events = std::move(fresh), destination = std::move(hook->destination)]() {
      return self->Deliver(events, destination);
    };
    if (!common::AcknowledgeThenRun(*group_, std::move(work), answer, Answer(200, ""),
                                    Answer(503, "the bot is stopping"))) {
      for (const auto& id : fresh_ids) events_.Forget(id);
    }
  }

 private:
  std::string BotUserId() {
    std::lock_guard lock(mu_);
    return bot_user_id_;
  }

  // A reply token works once: whoever takes it uses it.
  std::string TakeReplyToken(const std::string& message_id) {
    if (message_id.empty()) return {};
    std::lock_guard lock(mu_);
    auto it = reply_tokens_.find(message_id);
    if (it == reply_tokens_.end()) return {};
    std::string token = std::move(it->second);
    reply_tokens_.erase(it);
    return token;
  }

  void RememberReplyToken(const std::string& message_id, const std::string& token) {
    if (token.empty() || message_id.empty()) return;
    std::lock_guard lock(mu_);
    if (reply_tokens_.insert_or_assign(message_id, token).second)
      token_order_.push_back(message_id);
    while (token_order_.size() > kRememberedTokens) {
      reply_tokens_.erase(token_order_.front());
      token_order_.pop_front();
    }
  }

  asio::awaitable<util::Result<net::HttpResponse>> Call(std::string method, std::string path,
                                                        std::string body,
                                                        std::string retry_key = {}) {
    auto request = common::BearerRequest(std::move(method), base_ + path, token_, std::move(body));
    // A push with a retry key can be repeated safely: LINE answers 409 to a key it has taken.
    if (!retry_key.empty()) request.headers.emplace_back("X-Line-Retry-Key", std::move(retry_key));
    co_return co_await common::SendWithRetry(*context_.http, std::move(request));
  }

  // The bot's own user id, from /v2/bot/info: what isSelf mentions name, and its account id.
  asio::awaitable<void> SignIn() {
    co_await asio::this_coro::throw_if_cancelled(false);
    common::ReconnectBackoff backoff;
    for (;;) {
      auto response = co_await Call("GET", "/v2/bot/info", "");
      std::string why;
      if (!response) {
        if (response.error().code == ErrorCode::kCancelled) co_return;
        why = "GET /v2/bot/info failed: " + response.error().message;
      } else if (response->status == 401) {
        context_.host->OnTrouble("LINE refused the channel access token (401): " +
                                 DescribeError(response->status, response->body));
        co_return;
      } else if (response->status != 200) {
        why = "GET /v2/bot/info failed: " + DescribeError(response->status, response->body);
      } else if (auto info = DecodeBotInfo(response->body); !info) {
        why = info.error().message;
      } else {
        {
          std::lock_guard lock(mu_);
          bot_user_id_ = info->user_id;
        }
        context_.host->OnConnected(info->user_id);
        Log(LogLevel::kInfo,
            fmt::format("signed in to LINE as {} ({})", info->display_name, info->user_id));
        co_return;
      }
      const auto delay = backoff.NextDelay(context_.clock->Now());
      context_.host->OnTrouble(fmt::format("{}; {}", why, backoff.Describe(delay)));
      asio::steady_timer timer(co_await asio::this_coro::executor, delay);
      auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      auto state = co_await asio::this_coro::cancellation_state;
      if (ec || state.cancelled() != asio::cancellation_type::none) co_return;
    }
  }

  asio::awaitable<void> Deliver(std::vector<util::Json> events, std::string destination) {
    std::string bot = BotUserId();
    if (bot.empty()) bot = destination;  // before /v2/bot/info answered: the same id
    for (const util::Json& event : events) {
      auto decoded = DecodeEvent(event, bot);
      if (!decoded) {
        Log(LogLevel::kWarning, fmt::format("skipped a malformed LINE event {}: {}", EventId(event),
                                            decoded.error().message));
        continue;
      }
      if (!decoded->message) continue;
      if (decoded->content) {
        const bool kept = co_await FetchContent(*decoded);
        auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none) co_return;
        if (!kept) continue;
      }
      RememberReplyToken(decoded->message->message_id, decoded->reply_token);
      context_.host->OnMessage(std::move(*decoded->message));
    }
  }

  // Fills the pending image's bytes as a data URL; false when they cannot be had (the message
  // is then only an image, so it is dropped, with a log line).
  asio::awaitable<bool> FetchContent(DecodedEvent& decoded) {
    const PendingContent& pending = *decoded.content;
    auto request = common::BearerRequest(
        "GET", data_base_ + "/v2/bot/message/" + pending.message_id + "/content", token_);
    request.max_response_bytes = kMaxContentBytes;
    request.timeouts.total = std::chrono::seconds(60);
    auto response = co_await context_.http->Send(std::move(request));
    std::string why;
    if (!response) {
      why = response.error().message;
    } else if (response->status != 200) {
      why = DescribeError(response->status, response->body);
    } else if (response->body.empty()) {
      why = "no content";
    } else {
      std::string mime(response->Header("content-type"));
      if (mime.empty() || mime.find('/') == std::string::npos || mime.size() > 100) {
        mime = "image/jpeg";
      }
      auto& element = decoded.message->chain[pending.element];
      element.base64 = "data:" + mime + ";base64," + common::Base64Encode(response->body);
      co_return true;
    }
    Log(LogLevel::kWarning,
        fmt::format("left out the image of LINE message {}: {}", pending.message_id, why));
    auto& chain = decoded.message->chain;
    chain.erase(chain.begin() + static_cast<long>(pending.element));
    co_return chain.size() > 1 && chain.back().type != domain::ElementType::kSource;
  }

  util::Error Refused(std::string_view what, const util::Result<net::HttpResponse>& response) {
    if (!response) {
      return {response.error().code,
              fmt::format("LINE {} failed: {}", what, response.error().message)};
    }
    const std::string reason = DescribeError(response->status, response->body);
    if (response->status == 429) {
      util::Error error{ErrorCode::kUpstreamRateLimited,
                        fmt::format("LINE is rate limiting the bot: {}", reason)};
      if (auto after = common::RetryAfter(*response)) {
        error.retry_after_seconds = static_cast<int>(after->count());
      }
      return error;
    }
    if (response->status == 401) {
      context_.host->OnTrouble("LINE refused the channel access token (401): " + reason);
    }
    return {ErrorCode::kUpstreamFailed,
            fmt::format("LINE refused the {} ({}): {}", what, response->status, reason)};
  }

  static std::string Batch(const std::vector<util::JsonObject>& messages, std::size_t first) {
    util::JsonArray batch;
    for (std::size_t i = first; i < messages.size() && i < first + kMaxMessagesPerCall; ++i) {
      batch.push_back(messages[i]);
    }
    return util::SerializeJson(batch);
  }

  asio::awaitable<void> SendAll(std::shared_ptr<const std::vector<util::JsonObject>> messages,
                                std::string to, std::string reply_token,
                                std::shared_ptr<SendOnce> once) {
    co_await asio::this_coro::throw_if_cancelled(false);
    domain::SendReceipt receipt;
    for (std::size_t first = 0; first < messages->size(); first += kMaxMessagesPerCall) {
      const std::string batch = Batch(*messages, first);
      if (!reply_token.empty()) {
        // The token covers one call: the first batch.
        const std::string body = R"({"replyToken":)" +
                                 util::SerializeJson(util::Json(reply_token)) + R"(,"messages":)" +
                                 batch + "}";
        reply_token.clear();
        auto response = co_await Call("POST", "/v2/bot/message/reply", body);
        if (response && response->status == 200) {
          if (auto id = SentMessageId(response->body); !id.empty()) receipt.message_id = id;
          continue;
        }
        if (!response || !IsInvalidReplyToken(response->status, response->body)) {
          (*once)(tl::unexpected(Refused("reply", response)));
          co_return;
        }
        Log(LogLevel::kInfo, "the reply token had expired or was used; pushing instead");
      }
      const std::string body =
          R"({"to":)" + util::SerializeJson(util::Json(to)) + R"(,"messages":)" + batch + "}";
      auto response = co_await Call("POST", "/v2/bot/message/push", body, util::NewUuid());
      // 409 with a retry key: an earlier try of this very call was taken.
      if (!response || (response->status != 200 && response->status != 409)) {
        (*once)(tl::unexpected(Refused("push", response)));
        co_return;
      }
      if (auto id = SentMessageId(response->body); !id.empty()) receipt.message_id = id;
    }
    (*once)(receipt);
  }

  const std::string token_;
  const std::string secret_;
  const std::string base_;
  const std::string data_base_;
  common::RecentIds events_;

  std::mutex mu_;
  std::string bot_user_id_;                                    // guarded by mu_
  std::unordered_map<std::string, std::string> reply_tokens_;  // guarded by mu_
  std::deque<std::string> token_order_;                        // guarded by mu_; oldest first
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeLineAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, line::CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::line
