// The DingTalk adapter's stream side (ticket, connect, acknowledge, ping, disconnect, reconnect
// with backoff, robot messages handed to the host) and its sends (session webhook, else the robot
// OpenAPI through DingTalkOpenApi).
#include "platforms/dingtalk/dingtalk_adapter.hpp"

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "net/websocket.hpp"
#include "platforms/common/clock_waits.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/rest_call.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/dingtalk/dingtalk_codec.hpp"
#include "platforms/dingtalk/dingtalk_openapi.hpp"
#include "util/json.hpp"

namespace sb::platforms::dingtalk {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using common::SendOnce;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::string_view kDefaultBase = "https://api.dingtalk.com";
// Robot messages are a few KiB; a frame past this is refused by the socket (close 1009).
constexpr std::size_t kMaxFrameBytes = 1024 * 1024;
constexpr std::size_t kRememberedIds = 10'000;    // frame messageIds and message msgIds
constexpr std::size_t kRememberedReplies = 4096;  // msgId -> session webhook
constexpr int kMaxFrameComplaints = 10;           // logged per connection
// A session webhook this close to its expiry is not tried: the reply would race the deadline.
constexpr std::chrono::milliseconds kWebhookMargin = 5s;
constexpr std::chrono::milliseconds kRequestedReconnectPause = 500ms;

// HTTP-mode callbacks carry one robot message.
constexpr std::size_t kMaxCallbackBytes = 256 * 1024;

WebhookAnswer Answer(int status, std::string_view message) {
  util::JsonObject body;
  if (!message.empty()) body["message"] = message;
  return {status, "application/json", util::SerializeJson(body)};
}

// Where a reply to a received message can go without the OpenAPI.
struct ReplyRoute {
  std::string webhook;
  std::int64_t expires_ms = 0;  // 0: DingTalk named no expiry
};

std::string NonEmptyOr(std::string value, const std::string& fallback) {
  return value.empty() ? fallback : value;
}

// How a stream connection ended.
struct Ended {
  bool cancelled = false;
  std::string why;
  bool requested = false;  // DingTalk asked for it (SYSTEM disconnect): not a failure

  static Ended Cancelled() { return {true, {}, false}; }
  static Ended Lost(std::string why) { return {false, std::move(why), false}; }
  static Ended Requested(std::string why) { return {false, std::move(why), true}; }
};

class Core : public std::enable_shared_from_this<Core> {
 public:
  explicit Core(AdapterContext context)
      : context_(std::move(context)),
        client_id_(common::ConfigString(context_.config, "client_id")),
        client_secret_(common::ConfigString(context_.config, "client_secret")),
        // For an enterprise-internal app the robot code is the client id (LangBot falls back
        // the same way).
        robot_code_(NonEmptyOr(common::ConfigString(context_.config, "robot_code"), client_id_)),
        robot_name_(common::ConfigString(context_.config, "robot_name")),
        // At elements that name the bot carry this, as in LangBot (its bot_account_id).
        bot_account_id_(robot_name_.empty() ? robot_code_ : robot_name_),
        markdown_(common::ConfigBool(context_.config, "markdown_card", true)),
        base_(common::ConfigBaseUrl(context_.config, "api_base_url", kDefaultBase)),
        api_(context_.http, *context_.clock, base_, client_id_, client_secret_),
        group_(CoroutineGroup::Make(context_.executor)),
        seen_(kRememberedIds) {}

  void Start() {
    if (client_id_.empty() || client_secret_.empty()) {
      context_.host->OnTrouble(
          "no client_id/client_secret configured: copy them from the DingTalk developer console "
          "(app > credentials)");
      return;
    }
    if (!context_.websockets || !context_.http) {
      context_.host->OnTrouble("this server has no WebSocket transport for DingTalk Stream mode");
      return;
    }
    if (common::ConfigBool(context_.config, "enable-stream-reply", false)) {
      Log(LogLevel::kWarning,
          "enable-stream-reply is on, but AI card streaming is not supported by this server: "
          "replies are sent whole");
    }
    auto self = shared_from_this();
    group_->Spawn([self]() { return self->Run(); });
  }

  void Stop(std::function<void()> stopped) {
    if (stopping_.exchange(true)) return;
    group_->Close(std::move(stopped));
  }

  void Abandon() {
    if (stopping_.exchange(true)) return;
    group_->Close(nullptr);
  }

  // HTTP callback mode: a robot set to "HTTP mode" posts the same message to the bot's URL,
  // signed with the app secret. Taken besides the stream (a robot uses one mode or the other).
  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    if (call.method != "POST") {
      answer(Answer(405, "use POST"));
      return;
    }
    if (call.body.size() > kMaxCallbackBytes) {
      answer(Answer(413, "the body is too large"));
      return;
    }
    // The signature comes before anything else: a forged call costs one HMAC.
    if (!VerifyCallback(client_secret_, call.Header("timestamp"), call.Header("sign"),
                        util::ToUnixMillis(context_.clock->Now()))) {
      answer(Answer(401, "missing, stale or wrong timestamp/sign"));
      return;
    }
    auto decoded = DecodeBotMessage(call.body, bot_account_id_, robot_name_);
    if (!decoded) {
      Log(LogLevel::kWarning, "refused a malformed DingTalk callback: " + decoded.error().message);
      answer(Answer(400, decoded.error().message));
      return;
    }
    if (stopping_) {
      answer(Answer(503, "the bot is stopping"));
      return;
    }
    Deliver(std::move(*decoded));
    answer(Answer(200, ""));
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = common::MakeSendOnce(std::move(done));
    auto rendered = std::make_shared<const Rendered>(Render(message, markdown_));
    std::optional<ReplyRoute> route = FindReplyRoute(reply_to_message_id);
    auto self = shared_from_this();
    const bool started = !stopping_ && group_->Spawn([self, rendered, type = message.target_type,
                                                      target = message.target_id, route, once]() {
      return self->SendAll(rendered, type, target, route, once);
    });
    if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

 private:
  void Log(LogLevel level, std::string text) {
    context_.host->Log(level, api_.Scrub(std::move(text)));
  }
  void Trouble(const std::string& why) { context_.host->OnTrouble(api_.Scrub(why)); }

  // ---- the stream ----

  asio::awaitable<bool> Backoff(common::ReconnectBackoff& backoff, const std::string& why) {
    const util::Duration delay = backoff.NextDelay(context_.clock->Now());
    Trouble(fmt::format("{}; {}", why, backoff.Describe(delay)));
    co_return co_await common::Sleep(*context_.clock, delay);
  }

  asio::awaitable<void> Run() {
    co_await asio::this_coro::throw_if_cancelled(false);
    common::ReconnectBackoff backoff;
    for (;;) {
      if (co_await common::IsCancelled()) co_return;
      // A fresh ticket for every connection, as the SDKs do: a ticket is good for one connect.
      auto opened = co_await api_.OpenConnection();
      if (!opened) {
        if (opened.error().code == ErrorCode::kCancelled) co_return;
        if (opened.error().final) {
          Trouble(opened.error().message);
          co_await common::WaitUntilCancelled();
          co_return;
        }
        if (!co_await Backoff(backoff, opened.error().message)) co_return;
        continue;
      }
      net::WebSocketConnectRequest request;
      request.url = StreamUrl(*opened);
      request.limits.max_message_bytes = kMaxFrameBytes;
      auto conn = co_await context_.websockets->Connect(std::move(request));
      if (!conn) {
        if (conn.error().code == ErrorCode::kCancelled) co_return;
        // The error names the host only, never the query with the ticket.
        if (!co_await Backoff(backoff, "cannot connect to the DingTalk stream endpoint: " +
                                           conn.error().message)) {
          co_return;
        }
        continue;
      }
      backoff.Connected(context_.clock->Now());
      context_.host->OnConnected(bot_account_id_);
      Log(LogLevel::kInfo, "connected to the DingTalk stream");
      Ended ended = co_await ReadLoop(**conn);
      if (ended.cancelled) {
        co_await asio::this_coro::reset_cancellation_state();
        co_await (*conn)->Close(1000, "the bot stopped");
        co_return;
      }
      co_await (*conn)->Close(1000, "reconnecting");
      if (ended.requested) {
        // The server moves connections around (a rebalance or a deploy): a new ticket at once,
        // with a short pause so that a server repeating it cannot make a tight loop.
        Log(LogLevel::kInfo, ended.why + "; reconnecting");
        if (!co_await common::Sleep(*context_.clock, kRequestedReconnectPause)) co_return;
        continue;
      }
      if (!co_await Backoff(backoff, ended.why)) co_return;
    }
  }

  asio::awaitable<Ended> ReadLoop(net::WebSocketConnection& conn) {
    int complaints = 0;
    auto complain = [&](std::string text) {
      if (++complaints <= kMaxFrameComplaints) Log(LogLevel::kWarning, std::move(text));
    };
    for (;;) {
      auto message = co_await conn.Read();
      if (!message) {
        if (message.error().code == ErrorCode::kCancelled) co_return Ended::Cancelled();
        const net::WebSocketClose close = conn.close_info();
        co_return Ended::Lost(fmt::format("the DingTalk stream connection was lost (close {}{}{})",
                                          close.code, close.reason.empty() ? "" : ": ",
                                          close.reason.substr(0, 200)));
      }
      if (message->binary) {
        complain("skipped a binary stream frame (DingTalk sends JSON text)");
        continue;
      }
      auto frame = DecodeFrame(message->data);
      if (!frame) {
        complain("skipped a malformed stream frame: " + frame.error().message);
        continue;
      }
      // Every frame is acknowledged, repeats too: an unacknowledged one is sent again.
      if (!frame->message_id.empty()) {
        auto wrote = co_await conn.Write(EncodeAck(frame->message_id, AckData(*frame)));
        if (!wrote) {
          if (co_await common::IsCancelled()) co_return Ended::Cancelled();
          co_return Ended::Lost("the DingTalk stream connection failed while acknowledging");
        }
      }
      if (frame->type == "SYSTEM") {
        if (frame->topic == "disconnect") {
          co_return Ended::Requested("DingTalk asked the bot to reconnect (disconnect)");
        }
        continue;  // ping: the acknowledgement echoing its data is the answer
      }
      if (frame->type != "CALLBACK" || frame->topic != kBotMessageTopic) continue;
      if (!frame->message_id.empty() && !seen_.FirstSighting("frame:" + frame->message_id)) {
        continue;
      }
      auto decoded = DecodeBotMessage(frame->data, bot_account_id_, robot_name_);
      if (!decoded) {
        complain("skipped a malformed robot message: " + decoded.error().message);
        continue;
      }
      Deliver(std::move(*decoded));
    }
  }

  // Hands a robot message to the host (after fetching its images and file links), once per
  // msgId.
  void Deliver(BotMessage decoded) {
    if (!seen_.FirstSighting("msg:" + decoded.msg_id)) return;
    if (!decoded.session_webhook.empty()) {
      RememberReplyRoute(decoded.msg_id,
                         {decoded.session_webhook, decoded.session_webhook_expires_ms});
    }
    if (!decoded.message) {
      Log(LogLevel::kDebug, fmt::format("ignored {} ({})", decoded.skipped, decoded.msg_id));
      return;
    }
    if (decoded.media.empty()) {
      context_.host->OnMessage(std::move(*decoded.message));
      return;
    }
    auto self = shared_from_this();
    auto shared = std::make_shared<BotMessage>(std::move(decoded));
    if (!group_->Spawn([self, shared]() { return self->FetchMediaThenDeliver(shared); })) {
      seen_.Forget("msg:" + shared->msg_id);
    }
  }

  asio::awaitable<void> FetchMediaThenDeliver(std::shared_ptr<BotMessage> decoded) {
    co_await asio::this_coro::throw_if_cancelled(false);
    auto& chain = decoded->message->chain;
    // From the last, so that erasing one keeps the indexes of the others.
    for (auto it = decoded->media.rbegin(); it != decoded->media.rend(); ++it) {
      // Not a conditional expression with two co_awaits: GCC 12 miscompiles that.
      util::Result<std::string> got = util::Fail(ErrorCode::kInternal, "not fetched");
      if (it->file) {
        got = co_await api_.DownloadUrl(it->download_code, robot_code_);
      } else {
        got = co_await api_.DownloadImage(it->download_code, robot_code_);
      }
      if (co_await common::IsCancelled()) co_return;
      if (got) {
        (it->file ? chain[it->element].url : chain[it->element].base64) = std::move(*got);
        continue;
      }
      Log(LogLevel::kWarning,
          fmt::format("left out {} of DingTalk message {}: {}", it->file ? "a file" : "an image",
                      decoded->msg_id, got.error().message));
      chain.erase(chain.begin() + static_cast<long>(it->element));
    }
    const bool has_content = std::any_of(chain.begin(), chain.end(), [](const auto& e) {
      return e.type == domain::ElementType::kPlain || e.type == domain::ElementType::kImage ||
             e.type == domain::ElementType::kFile;
    });
    if (!has_content) co_return;
    context_.host->OnMessage(std::move(*decoded->message));
  }

  // ---- replies and sends ----

  void RememberReplyRoute(const std::string& msg_id, ReplyRoute route) {
    std::lock_guard lock(mu_);
    if (routes_.insert_or_assign(msg_id, std::move(route)).second) route_order_.push_back(msg_id);
    while (route_order_.size() > kRememberedReplies) {
      routes_.erase(route_order_.front());
      route_order_.pop_front();
    }
  }

  std::optional<ReplyRoute> FindReplyRoute(const std::string& msg_id) {
    if (msg_id.empty()) return std::nullopt;
    std::lock_guard lock(mu_);
    auto it = routes_.find(msg_id);
    if (it == routes_.end()) return std::nullopt;
    return it->second;
  }

  bool StillValid(const ReplyRoute& route) const {
    if (route.expires_ms == 0) return true;
    return util::ToUnixMillis(context_.clock->Now()) + kWebhookMargin.count() < route.expires_ms;
  }

  util::Error Refused(std::string_view what, const net::HttpResponse& response) {
    const std::string reason = api_.Scrub(DescribeError(response.status, response.body));
    if (response.status == 429) {
      util::Error error{ErrorCode::kUpstreamRateLimited,
                        fmt::format("DingTalk is rate limiting the bot: {}", reason)};
      if (auto after = common::RetryAfter(response)) {
        error.retry_after_seconds = static_cast<int>(after->count());
      }
      return error;
    }
    return {ErrorCode::kUpstreamFailed, fmt::format("DingTalk refused the {}: {}", what, reason)};
  }

  asio::awaitable<void> SendAll(std::shared_ptr<const Rendered> rendered, domain::TargetType type,
                                std::string target, std::optional<ReplyRoute> route,
                                std::shared_ptr<SendOnce> once) {
    co_await asio::this_coro::throw_if_cancelled(false);
    domain::SendReceipt receipt;
    const bool person = type == domain::TargetType::kPerson;
    for (std::size_t i = 0; i < rendered->pieces.size(); ++i) {
      if (route && !StillValid(*route)) {
        Log(LogLevel::kInfo, "the session webhook has expired; sending through the OpenAPI");
        route.reset();
      }
      if (route) {
        auto answer = co_await api_.PostWebhook(route->webhook, EncodeWebhookReply(*rendered, i));
        if (co_await common::IsCancelled()) co_return;
        if (answer && WebhookAccepted(answer->status, answer->body)) continue;
        if (!answer && answer.error().code == ErrorCode::kUpstreamTimeout) {
          // It may have been delivered: sending again could show the reply twice.
          (*once)(util::Fail(ErrorCode::kUpstreamTimeout,
                             "the DingTalk session webhook did not answer in time"));
          co_return;
        }
        Log(LogLevel::kInfo,
            fmt::format(
                "the session webhook refused the reply ({}); sending through the OpenAPI",
                answer ? DescribeError(answer->status, answer->body) : answer.error().message));
        route.reset();
      }
      auto answer = co_await api_.Post(
          person ? "/v1.0/robot/oToMessages/batchSend" : "/v1.0/robot/groupMessages/send",
          EncodeRobotSend(*rendered, i, robot_code_, type, target));
      if (!answer) {
        if (answer.error().code == ErrorCode::kUpstreamAuth) Trouble(answer.error().message);
        (*once)(
            tl::unexpected(util::Error{answer.error().code, api_.Scrub(answer.error().message)}));
        co_return;
      }
      if (answer->status != 200) {
        (*once)(
            tl::unexpected(Refused(person ? "message to the person" : "group message", *answer)));
        co_return;
      }
      if (auto key = ProcessQueryKey(answer->body); !key.empty()) receipt.message_id = key;
    }
    (*once)(receipt);
  }

  const AdapterContext context_;
  const std::string client_id_;
  const std::string client_secret_;
  const std::string robot_code_;
  const std::string robot_name_;
  const std::string bot_account_id_;
  const bool markdown_;
  const std::string base_;
  DingTalkOpenApi api_;
  const std::shared_ptr<CoroutineGroup> group_;
  std::atomic<bool> stopping_{false};
  common::RecentIds seen_;

  std::mutex mu_;
  std::unordered_map<std::string, ReplyRoute> routes_;  // guarded by mu_
  std::deque<std::string> route_order_;                 // guarded by mu_; oldest first
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeDingTalkAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::dingtalk
