#include "platforms/slack/slack_adapter.hpp"

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
#include "platforms/common/json_fields.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/rest_call.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/slack/slack_codec.hpp"
#include "util/call_once.hpp"

namespace sb::platforms::slack {
namespace {

namespace asio = boost::asio;
using domain::LogLevel;
using util::ErrorCode;

// Events are small; the HTTP layer's cap (10 MiB by default) is far above any Slack event.
constexpr std::size_t kMaxBodyBytes = 1024 * 1024;
constexpr std::size_t kRememberedEvents = 10'000;  // event_ids and channel:ts keys
constexpr std::size_t kRememberedThreads = 4096;   // message ts -> thread_ts, for replies

WebhookAnswer Json(int status, std::string_view error) {
  util::JsonObject body{{"ok", status == 200}};
  if (!error.empty()) body["error"] = error;
  return {status, "application/json", util::SerializeJson(body)};
}

// Slack's answers that mean the token itself is no good: retrying cannot help.
bool TokenRefused(std::string_view error) {
  return error == "invalid_auth" || error == "not_authed" || error == "account_inactive" ||
         error == "token_revoked" || error == "token_expired" || error == "not_allowed_token_type";
}

// What one Web API call came to.
struct Outcome {
  bool ok = false;
  ApiResponse api;
  util::Error error;  // when !ok: what Send reports; never holds the token
};

class Core : public common::AdapterCore<Core> {
 public:
  explicit Core(AdapterContext context)
      : AdapterCore(std::move(context)),
        token_(common::ConfigString(context_.config, "bot_token")),
        signing_secret_(common::ConfigString(context_.config, "signing_secret")),
        base_(common::ConfigBaseUrl(context_.config, "api_base_url", "https://slack.com/api")),
        events_(kRememberedEvents),
        messages_(kRememberedEvents) {}

  void Start() {
    StartIfMet({{!signing_secret_.empty(),
                 "no signing_secret configured: every event from Slack would be refused"},
                {!token_.empty(), "no bot_token configured: paste the app's xoxb- bot token"}},
               [self = shared_from_this()]() { return self->SignIn(); });
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = common::MakeSendOnce(std::move(done));
    auto calls = std::make_shared<const std::vector<OutboundCall>>(
        EncodeOutgoing(message, ThreadOf(reply_to_message_id)));
    auto self = shared_from_this();
    SpawnSend(once, [self, calls, once]() { return self->PostAll(calls, once); });
  }

  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    if (call.method != "POST") {
      answer(Json(405, "method_not_allowed"));
      return;
    }
    if (call.body.size() > kMaxBodyBytes) {
      answer(Json(413, "body_too_large"));
      return;
    }
    // The signature comes before anything else: a forged or replayed call costs one HMAC.
    if (!Verify(signing_secret_, call.body, call.Header("x-slack-signature"),
                call.Header("x-slack-request-timestamp"), context_.clock->Now())) {
      answer(Json(401, "invalid_signature"));
      return;
    }
    auto envelope = DecodeEnvelope(call.body);
    if (!envelope) {
      Log(LogLevel::kWarning, "refused a malformed Slack request: " + envelope.error().message);
      answer(Json(400, envelope.error().message));
      return;
    }
    switch (envelope->kind) {
      case Envelope::Kind::kUrlVerification:
        answer({200, "text/plain", envelope->challenge});
        return;
      case Envelope::Kind::kOther:
        Log(LogLevel::kWarning, fmt::format("Slack sent '{}'", envelope->type));
        answer(Json(200, ""));
        return;
      case Envelope::Kind::kEventCallback:
        break;
    }
    // Slack retries (X-Slack-Retry-Num) and replays within the window carry the same event_id.
    const std::string event_id = envelope->event_id;
    if (!events_.FirstSighting(event_id)) {
      answer(Json(200, ""));
      return;
    }
    if (stopping()) {
      events_.Forget(event_id);
      answer(Json(503, "the bot is stopping"));
      return;
    }
    auto self = shared_from_this();
    auto work = [self, event = std::move(envelope->event), event_id]() {
      return self->Deliver(event, event_id);
    };
    const bool started = common::AcknowledgeThenRun(*group_, std::move(work), answer, Json(200, ""),
                                                    Json(503, "the bot is stopping"));
    if (!started) events_.Forget(event_id);  // Slack retries a 503: take the retry then
  }

 private:
  Identity Self() {
    std::lock_guard lock(mu_);
    return self_;
  }

  std::string ThreadOf(const std::string& ts) {
    if (ts.empty()) return {};
    std::lock_guard lock(mu_);
    auto it = threads_.find(ts);
    return it == threads_.end() ? std::string() : it->second;
  }

  // files.completeUploadExternal wants a conversation id: a person's DM channel, when an event
  // has shown it, else the user id as chat.postMessage takes it.
  std::string DirectChannelOf(const std::string& target) {
    std::lock_guard lock(mu_);
    auto it = direct_channels_.find(target);
    return it == direct_channels_.end() ? target : it->second;
  }

  void RememberDirectChannel(const std::string& user, const std::string& channel) {
    std::lock_guard lock(mu_);
    if (direct_channels_.size() >= kRememberedThreads) direct_channels_.clear();
    direct_channels_[user] = channel;
  }

  void RememberThread(const std::string& ts, const std::string& thread_ts) {
    if (thread_ts.empty()) return;
    std::lock_guard lock(mu_);
    if (threads_.emplace(ts, thread_ts).second) thread_order_.push_back(ts);
    while (thread_order_.size() > kRememberedThreads) {
      threads_.erase(thread_order_.front());
      thread_order_.pop_front();
    }
  }

  asio::awaitable<Outcome> Call(std::string method, const util::JsonObject& params) {
    co_return co_await Call(std::move(method), util::SerializeJson(params), "");
  }

  // A Web API call with a JSON body, or with a form body when `form_type` names its type.
  asio::awaitable<Outcome> Call(std::string method, std::string body, std::string form_type) {
    auto request = common::BearerRequest("POST", base_ + "/" + method, token_,
                                         form_type.empty() ? std::move(body) : std::string());
    if (!form_type.empty()) {
      request.headers.emplace_back("Content-Type", std::move(form_type));
      request.body = std::move(body);
    }
    Outcome outcome;
    auto response = co_await common::SendWithRetry(*context_.http, std::move(request));
    if (!response) {
      outcome.error = {response.error().code,
                       fmt::format("slack {} failed: {}", method, response.error().message)};
      co_return outcome;
    }
    if (response->status == 429) {
      const auto after = common::RetryAfter(*response);
      outcome.error = {ErrorCode::kUpstreamRateLimited,
                       fmt::format("Slack is rate limiting the bot ({} asks to wait {} s)", method,
                                   after ? after->count() : 0)};
      outcome.error.retry_after_seconds = after ? static_cast<int>(after->count()) : 0;
      co_return outcome;
    }
    auto api = DecodeApiResponse(response->status, response->body);
    if (!api) {
      outcome.error = {api.error().code, fmt::format("slack {}: {}", method, api.error().message)};
      co_return outcome;
    }
    outcome.api = std::move(*api);
    if (!outcome.api.ok) {
      outcome.error = {ErrorCode::kUpstreamFailed,
                       fmt::format("slack refused {}: {}", method, outcome.api.error)};
      co_return outcome;
    }
    outcome.ok = true;
    co_return outcome;
  }

  // auth.test until it answers: the bot's user id is its account id and tells its own messages.
  asio::awaitable<void> SignIn() {
    co_await asio::this_coro::throw_if_cancelled(false);
    common::ReconnectBackoff backoff;
    for (;;) {
      Outcome outcome = co_await Call("auth.test", util::JsonObject());
      if (outcome.ok) {
        auto identity = DecodeAuthTest(outcome.api);
        if (identity) {
          {
            std::lock_guard lock(mu_);
            self_ = *identity;
          }
          context_.host->OnConnected(identity->user_id);
          Log(LogLevel::kInfo,
              fmt::format("signed in to Slack as {} (team {})", identity->user_id, identity->team));
          co_return;
        }
        outcome.error = identity.error();
      }
      if (outcome.error.code == ErrorCode::kCancelled) co_return;
      if (!outcome.ok && TokenRefused(outcome.api.error)) {
        context_.host->OnTrouble(
            fmt::format("Slack refused the bot token ({})", outcome.api.error));
        co_return;
      }
      const auto delay = backoff.NextDelay(context_.clock->Now());
      context_.host->OnTrouble(
          fmt::format("{}; {}", outcome.error.message, backoff.Describe(delay)));
      asio::steady_timer timer(co_await asio::this_coro::executor, delay);
      auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      auto state = co_await asio::this_coro::cancellation_state;
      if (ec || state.cancelled() != asio::cancellation_type::none) co_return;
    }
  }

  asio::awaitable<void> Deliver(util::Json event, std::string event_id) {
    auto decoded = DecodeEvent(event, Self());
    if (!decoded) {
      Log(LogLevel::kWarning,
          fmt::format("skipped a malformed Slack event {}: {}", event_id, decoded.error().message));
      co_return;
    }
    if (!decoded->message) co_return;
    // A mention arrives twice, as `message` and as `app_mention`: the first one is answered.
    if (!messages_.FirstSighting(decoded->DedupeKey())) co_return;
    RememberThread(decoded->ts, decoded->thread_ts);
    if (decoded->message->chat_type == domain::TargetType::kPerson) {
      RememberDirectChannel(decoded->message->chat_id, decoded->channel);
    }
    context_.host->OnMessage(std::move(*decoded->message));
  }

  asio::awaitable<void> PostAll(std::shared_ptr<const std::vector<OutboundCall>> calls,
                                std::shared_ptr<common::SendOnce> once) {
    co_await asio::this_coro::throw_if_cancelled(false);
    domain::SendReceipt receipt;
    for (const OutboundCall& call : *calls) {
      Outcome outcome;
      if (call.upload) {
        outcome = co_await UploadFile(call);
      } else {
        outcome = co_await Call("chat.postMessage", call.post);
      }
      if (!outcome.ok) {
        if (TokenRefused(outcome.api.error)) {
          context_.host->OnTrouble(
              fmt::format("Slack refused the bot token ({})", outcome.api.error));
        }
        (*once)(tl::unexpected(outcome.error));
        co_return;
      }
      if (auto ts = SentTs(outcome.api); !ts.empty()) receipt.message_id = std::move(ts);
    }
    (*once)(receipt);
  }

  // files.getUploadURLExternal, the bytes to its upload_url, files.completeUploadExternal into
  // the call's channel and thread (files.upload is deprecated).
  asio::awaitable<Outcome> UploadFile(const OutboundCall& call) {
    const std::string form_type = "application/x-www-form-urlencoded";
    const Upload& upload = *call.upload;
    std::string ticket_form = FormEncode(
        {{"filename", upload.filename}, {"length", std::to_string(upload.bytes.size())}});
    Outcome ticket_call =
        co_await Call("files.getUploadURLExternal", std::move(ticket_form), form_type);
    if (!ticket_call.ok) co_return ticket_call;
    auto ticket = DecodeUploadTicket(ticket_call.api);
    if (!ticket) {
      ticket_call.ok = false;
      ticket_call.error = ticket.error();
      co_return ticket_call;
    }
    net::HttpRequest bytes;
    bytes.method = "POST";
    bytes.url = ticket->upload_url;
    bytes.headers.emplace_back("Content-Type", "application/octet-stream");
    bytes.body = upload.bytes;
    bytes.timeouts.connect = std::chrono::seconds(10);
    bytes.timeouts.total = std::chrono::seconds(120);
    bytes.max_response_bytes = 64 * 1024;
    auto sent = co_await context_.http->Send(std::move(bytes));
    if (!sent || sent->status != 200) {
      Outcome failed;
      if (sent) {
        failed.error = {ErrorCode::kUpstreamFailed,
                        fmt::format("the Slack file upload answered HTTP {}", sent->status)};
      } else {
        failed.error = {sent.error().code, "the Slack file upload failed: " + sent.error().message};
      }
      co_return failed;
    }
    const std::string target(common::StringOr(call.post, "channel"));
    util::JsonArray files{util::JsonObject{{"id", ticket->file_id}, {"title", upload.filename}}};
    std::vector<std::pair<std::string, std::string>> form{{"files", util::SerializeJson(files)},
                                                          {"channel_id", DirectChannelOf(target)}};
    if (const auto thread = common::StringOr(call.post, "thread_ts"); !thread.empty()) {
      form.emplace_back("thread_ts", std::string(thread));
    }
    co_return co_await Call("files.completeUploadExternal", FormEncode(form), form_type);
  }

  const std::string token_;
  const std::string signing_secret_;
  const std::string base_;
  common::RecentIds events_;    // event_ids already taken
  common::RecentIds messages_;  // channel:ts of messages already handed on

  std::mutex mu_;
  Identity self_;                                                 // guarded by mu_; from auth.test
  std::unordered_map<std::string, std::string> threads_;          // guarded by mu_
  std::deque<std::string> thread_order_;                          // guarded by mu_; oldest first
  std::unordered_map<std::string, std::string> direct_channels_;  // guarded by mu_; user -> D…
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeSlackAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, slack::CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::slack
