// The Satori adapter's event side: connect, IDENTIFY (resuming from the last sn), READY, the read
// loop and the PING loop, reconnects with backoff, and message-created events handed to the host;
// sends go out through SatoriApi (satori_api.cpp).
#include "platforms/satori/satori_adapter.hpp"

#include <fmt/format.h>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <utility>
#include <variant>

#include "net/websocket.hpp"
#include "platforms/common/adapter_core.hpp"
#include "platforms/common/clock_waits.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/reconnect_loop.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/satori/satori_api.hpp"
#include "platforms/satori/satori_codec.hpp"
#include "platforms/satori/satori_elements.hpp"

namespace sb::platforms::satori {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using domain::LogLevel;
using util::ErrorCode;

// The spec: IDENTIFY within 10 s of connecting, then a PING every 10 s.
constexpr std::chrono::milliseconds kReadyTimeout = 10s;
constexpr std::chrono::milliseconds kPingInterval = 10s;
// Nothing at all from the SDK (not even a PONG) for this long: the connection is dead.
constexpr std::chrono::milliseconds kSilenceLimit = 35s;
constexpr std::size_t kMaxEventBytes = 16 * 1024 * 1024;
constexpr std::size_t kRecentMessages = 4096;  // message ids remembered against replays
constexpr int kMaxFrameComplaints = 10;        // logged per connection; the rest are dropped
// The reference SDK (satorijs/satori packages/server) closes with 4004 on a wrong token.
constexpr int kCloseInvalidToken = 4004;

// One open event connection, shared by its read loop and its ping loop (one strand).
struct Link {
  std::shared_ptr<net::WebSocketConnection> conn;
  util::TimePoint last_frame{};
  bool ready = false;
  util::TimePoint ready_at{};
  int complaints = 0;
};

struct Ended {
  enum class Kind { kCancelled, kReconnect, kFatal };
  Kind kind = Kind::kReconnect;
  std::string why;
  bool abort = false;  // drop the TCP connection instead of a close handshake (a dead peer)
};

Ended Cancelled() {
  Ended ended;
  ended.kind = Ended::Kind::kCancelled;
  return ended;
}

Ended Reconnect(std::string why, bool abort = false) {
  Ended ended;
  ended.why = std::move(why);
  ended.abort = abort;
  return ended;
}

Ended Fatal(std::string why) {
  Ended ended;
  ended.kind = Ended::Kind::kFatal;
  ended.why = std::move(why);
  return ended;
}

bool HasControlCharacters(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7F) return true;
  }
  return false;
}

class Core : public common::AdapterCore<Core> {
 public:
  explicit Core(AdapterContext context)
      : AdapterCore(std::move(context)),
        token_(common::ConfigString(context_.config, "token")),
        platform_(common::ConfigString(context_.config, "platform")),
        endpoints_(EndpointsFromConfig(context_.config)),
        api_(context_, token_, endpoints_.api),
        seen_(kRecentMessages) {}

  void Start() {
    StartIfMet({{!HasControlCharacters(token_),
                 "the token holds control characters (a pasted line break?)"},
                {endpoints_.events.starts_with("ws://") || endpoints_.events.starts_with("wss://"),
                 "satori_endpoint must be a ws:// or wss:// URL"},
                {endpoints_.api.starts_with("http://") || endpoints_.api.starts_with("https://"),
                 "satori_api_base_url must be an http:// or https:// URL"},
                {context_.websockets != nullptr,
                 "this server has no WebSocket transport for the Satori events"}},
               [self = shared_from_this()]() { return self->Run(); });
  }

  void Send(domain::OutgoingMessage message, std::string /*reply_to_message_id*/,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    // Satori has no reply reference in message.create; a Quote element in the chain quotes.
    auto once = common::MakeSendOnce(std::move(done));
    auto self = shared_from_this();
    std::string content = EncodeContent(message.chain);
    SpawnSend(once, [self, once, type = message.target_type, target = std::move(message.target_id),
                     content = std::move(content)]() mutable {
      return self->api_.Deliver(type, std::move(target), std::move(content), once);
    });
  }

 private:
  std::string Scrub(std::string text) const override { return api_.Scrub(std::move(text)); }

  asio::awaitable<void> Run() {
    co_await asio::this_coro::throw_if_cancelled(false);
    Log(LogLevel::kInfo, "connecting to the Satori events at " + endpoints_.events);
    co_await common::RunReconnecting(
        *context_.clock, [this](const std::string& why) { Trouble(why); },
        [this](common::ReconnectBackoff&) { return Connect(); });
  }

  // One connection: open it, run it, close it.
  asio::awaitable<common::Attempt> Connect() {
    using common::Attempt;
    net::WebSocketConnectRequest request;
    request.url = endpoints_.events;
    request.limits.max_message_bytes = kMaxEventBytes;
    auto conn = co_await context_.websockets->Connect(std::move(request));
    if (!conn) {
      if (conn.error().code == ErrorCode::kCancelled) co_return Attempt::Cancelled();
      co_return Attempt::Retry("cannot connect to the Satori server: " +
                               api_.Scrub(conn.error().message));
    }
    Link link{.conn = *conn, .last_frame = context_.clock->Now()};
    Ended ended = co_await RunConnection(link);
    std::optional<util::TimePoint> connected_at;
    if (link.ready) connected_at = link.ready_at;
    if (ended.kind == Ended::Kind::kCancelled) {
      co_await asio::this_coro::reset_cancellation_state();
      co_await link.conn->Close(1000, "the bot stopped");
      co_return Attempt::Cancelled();
    }
    if (ended.abort) {
      link.conn->Abort();
    } else {
      co_await link.conn->Close(1000, "reconnecting");
    }
    link.conn.reset();
    if (ended.kind == Ended::Kind::kFatal) co_return Attempt::Fatal(std::move(ended.why));
    co_return Attempt::Retry(std::move(ended.why), connected_at);
  }

  asio::awaitable<Ended> RunConnection(Link& link) {
    const std::optional<std::int64_t> sn = LastSn();
    auto wrote = co_await link.conn->Write(EncodeIdentify(token_, sn));
    if (!wrote) co_return Reconnect("the Satori server closed the connection before IDENTIFY");
    auto first = co_await (link.conn->Read() || Pause(kReadyTimeout));
    if (first.index() == 1) {
      if (!std::get<1>(first)) co_return Cancelled();
      co_return Reconnect("the Satori server sent no READY within 10 s of IDENTIFY");
    }
    auto& message = std::get<0>(first);
    if (!message) {
      if (message.error().code == ErrorCode::kCancelled) co_return Cancelled();
      const net::WebSocketClose close = link.conn->close_info();
      if (close.code == kCloseInvalidToken) {
        co_return Fatal(fmt::format(
            "the Satori server refused the token at IDENTIFY (close {}{}{}); fix the token and "
            "save the bot to try again",
            close.code, close.reason.empty() ? "" : ": ", close.reason));
      }
      co_return Reconnect(
          fmt::format("the Satori server closed the connection before READY (close {}{}{})",
                      close.code, close.reason.empty() ? "" : ": ", close.reason));
    }
    link.last_frame = context_.clock->Now();
    auto signal = DecodeSignal(message->data);
    if (!signal || signal->op != kOpReady) {
      co_return Reconnect("the Satori server's first signal was not READY");
    }
    auto login = PickLogin(DecodeLogins(signal->body), platform_);
    if (!login) co_return Reconnect(login.error().message);
    api_.SetLogin(*login);
    {
      std::lock_guard lock(mu_);
      self_ = *login;
    }
    link.ready = true;
    link.ready_at = context_.clock->Now();
    context_.host->OnConnected(login->user_id);
    Log(LogLevel::kInfo,
        fmt::format("connected to the Satori server as {} ({}) on {}{}",
                    login->user_name.empty() ? login->user_id : login->user_name, login->user_id,
                    login->platform, sn ? fmt::format(", resuming after event {}", *sn) : ""));
    auto result = co_await (ReadLoop(link) || PingLoop(link));
    co_return result.index() == 0 ? std::get<0>(std::move(result)) : std::get<1>(std::move(result));
  }

  void Complain(Link& link, std::string text) {
    if (++link.complaints <= kMaxFrameComplaints) Log(LogLevel::kWarning, std::move(text));
  }

  asio::awaitable<Ended> ReadLoop(Link& link) {
    for (;;) {
      auto message = co_await link.conn->Read();
      if (!message) {
        if (message.error().code == ErrorCode::kCancelled) co_return Cancelled();
        const net::WebSocketClose close = link.conn->close_info();
        co_return Reconnect(fmt::format("the Satori connection was lost (close {}{}{})", close.code,
                                        close.reason.empty() ? "" : ": ", close.reason));
      }
      link.last_frame = context_.clock->Now();
      auto signal = DecodeSignal(message->data);
      if (!signal) {
        Complain(link, "skipped a malformed Satori signal: " + signal.error().message);
        continue;
      }
      switch (signal->op) {
        case kOpEvent:
          Event(link, signal->body);
          break;
        case kOpReady:
          if (auto login = PickLogin(DecodeLogins(signal->body), platform_)) api_.SetLogin(*login);
          break;
        case kOpPong:
        case kOpMeta:
          break;
        default:
          Complain(link, fmt::format("skipped a Satori signal with unknown op {}", signal->op));
          break;
      }
    }
  }

  void Event(Link& link, const util::JsonObject& body) {
    auto event = DecodeEvent(body, Self());
    if (!event) {
      Complain(link, "skipped a malformed Satori event: " + event.error().message);
      return;
    }
    if (event->sn) {
      std::lock_guard lock(mu_);
      last_sn_ = event->sn;
    }
    if (!event->message) return;
    domain::ReceivedMessage& message = *event->message;
    // A resume may replay what was already handed on.
    const std::string key = !message.message_id.empty()
                                ? "m:" + message.chat_id + ":" + message.message_id
                                : (event->sn ? fmt::format("sn:{}", *event->sn) : std::string());
    if (!seen_.FirstSighting(key)) return;
    if (message.chat_type == domain::TargetType::kPerson) {
      api_.RememberDm(message.sender_id, event->channel_id);
    }
    context_.host->OnMessage(std::move(message));
  }

  asio::awaitable<Ended> PingLoop(Link& link) {
    for (;;) {
      if (!co_await Pause(kPingInterval)) co_return Cancelled();
      if (context_.clock->Now() - link.last_frame > kSilenceLimit) {
        co_return Reconnect("the Satori server answered no PING for 35 s", true);
      }
      auto wrote = co_await link.conn->Write(EncodePing());
      if (!wrote) co_return Reconnect("the Satori connection failed while sending PING");
    }
  }

  std::optional<std::int64_t> LastSn() {
    std::lock_guard lock(mu_);
    return last_sn_;
  }

  Login Self() {
    std::lock_guard lock(mu_);
    return self_;
  }

  const std::string token_;
  const std::string platform_;
  const Endpoints endpoints_;
  SatoriApi api_;
  common::RecentIds seen_;

  std::mutex mu_;
  Login self_;                           // guarded by mu_; READY's login for `platform_`
  std::optional<std::int64_t> last_sn_;  // guarded by mu_; the last event's sn, for resuming
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeSatoriAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::satori
