// The KOOK adapter's gateway side: user/me, gateway/index, connect, HELLO, the read loop and the
// PING loop, resume after a drop, RECONNECT, backoff, and message events handed to the host in sn
// order; sends go out through KookRest (kook_rest.cpp).
#include "platforms/kook/kook_adapter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <mutex>
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
#include "platforms/kook/kook_codec.hpp"
#include "platforms/kook/kook_rest.hpp"
#include "platforms/kook/kook_signals.hpp"
#include "platforms/kook/kook_sn_order.hpp"

namespace sb::platforms::kook {

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using domain::LogLevel;
using util::ErrorCode;

// The websocket doc: HELLO within 6 s; PING every 30 s (-5, +5); PONG within 6 s.
constexpr std::chrono::milliseconds kHelloTimeout = 6s;
constexpr std::chrono::milliseconds kPingInterval = 30s;
constexpr std::chrono::milliseconds kPingJitter = 5s;
constexpr std::chrono::milliseconds kPongTimeout = 6s;
// The doc tries a resume twice before it fetches a new gateway (and a new session).
constexpr int kResumeTries = 2;
constexpr std::size_t kMaxGatewayMessageBytes = 16 * 1024 * 1024;
constexpr std::size_t kRecentMessages = 4096;  // msg ids remembered against replays
constexpr int kMaxFrameComplaints = 10;        // logged per connection; the rest are dropped

using common::ConfigString;

// KOOK tokens are base64-ish with '/' separators; a space or a line break would change the
// Authorization header, so such a token is refused before any call.
bool PlausibleToken(std::string_view token) {
  return token.size() >= 8 && token.size() <= 512 &&
         std::all_of(token.begin(), token.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

// What a gateway session needs to be resumed (the last sn is the SnOrder's).
struct Session {
  std::string id;           // empty: none, a fresh connection
  std::string gateway_url;  // from gateway/index; holds a credential in its query
  int resume_failures = 0;
};

// One open gateway connection, shared by its read loop and its PING loop (both on one strand).
struct Link {
  std::shared_ptr<net::WebSocketConnection> conn;
  bool pong_due = false;  // a PING went out and no PONG came yet
  bool ready = false;
  util::TimePoint ready_at{};
  int complaints = 0;
  std::int64_t resume_asked_after = -1;  // the sn of the last RESUME (s=4) sent on this link
};

// How a connection ended.
struct Ended {
  enum class Kind { kCancelled, kReconnect, kFatal };
  Kind kind = Kind::kReconnect;
  std::string why;
  bool resume = true;      // keep the session (and sn) for a resume
  bool refetch = false;    // ask gateway/index again
  bool immediate = false;  // KOOK asked for it: no backoff
  bool abort = false;      // drop the TCP connection instead of a close handshake (no PONG)
};

Ended Cancelled() {
  Ended ended;
  ended.kind = Ended::Kind::kCancelled;
  return ended;
}

class Core : public common::AdapterCore<Core> {
 public:
  explicit Core(AdapterContext context)
      : AdapterCore(std::move(context)),
        token_(ConfigString(context_.config, "token")),
        rest_(context_, token_,
              common::ConfigBaseUrl(context_.config, "api_base_url", "https://www.kookapp.cn/api")),
        recent_(kRecentMessages) {}

  void Start() {
    StartIfMet(
        {{!token_.empty(),
          "no token configured: create a bot on the KOOK developer site and paste its token"},
         {PlausibleToken(token_), "the token is not a KOOK bot token (no spaces or line breaks)"},
         {context_.websockets != nullptr,
          "this server has no WebSocket transport for the KOOK gateway"}},
        [self = shared_from_this()]() { return self->Run(); });
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = common::MakeSendOnce(std::move(done));
    auto calls = std::make_shared<const std::vector<OutboundCall>>(EncodeOutgoing(message));
    // A channel reply quotes the message it answers, as LangBot's quote-origin does; a direct
    // message needs no quote to be understood.
    std::string quote = QuotedId(message.chain);
    if (quote.empty() && message.target_type == domain::TargetType::kGroup) {
      quote = std::move(reply_to_message_id);
    }
    auto self = shared_from_this();
    SpawnSend(once, [self, calls, once, type = message.target_type, target = message.target_id,
                     quote = std::move(quote)]() {
      return self->rest_.SendAll(type, target, quote, calls, once);
    });
  }

 private:
  std::string Scrub(std::string text) const override { return rest_.Scrub(std::move(text)); }

  // A REST failure before the gateway: the token refused (retrying cannot help) is fatal.
  static common::Attempt RestFailed(const util::Error& error, std::string_view what) {
    if (error.code == ErrorCode::kCancelled) return common::Attempt::Cancelled();
    if (error.final) {
      return common::Attempt::Fatal(error.message +
                                    "; fix the token and save the bot to try again");
    }
    return common::Attempt::Retry(fmt::format("cannot {}: {}", what, error.message));
  }

  // ---- gateway ----

  asio::awaitable<void> Run() {
    co_await asio::this_coro::throw_if_cancelled(false);
    bool signed_in = false;
    Session session;
    co_await common::RunReconnecting(
        *context_.clock, [this](const std::string& why) { Trouble(why); },
        [&](common::ReconnectBackoff& backoff) { return Connect(backoff, session, signed_in); });
  }

  // One pass of Run: the bot's account (once), the gateway URL when needed, a connection run
  // until it ends.
  asio::awaitable<common::Attempt> Connect(common::ReconnectBackoff& backoff, Session& session,
                                           bool& signed_in) {
    using common::Attempt;
    // The bot's own id first: without it the bot would answer its own messages.
    if (!signed_in) {
      auto me = co_await rest_.UserMe();
      if (!me) co_return RestFailed(me.error(), "read the bot's KOOK account (user/me)");
      {
        std::lock_guard lock(mu_);
        bot_id_ = me->id;
      }
      Log(LogLevel::kInfo, fmt::format("signed in to KOOK as {} ({})", me->username, me->id));
      signed_in = true;
    }
    const bool resuming = !session.id.empty();
    if (session.gateway_url.empty() || !resuming) {
      auto got = co_await rest_.GatewayIndex();
      if (!got) co_return RestFailed(got.error(), "get the KOOK gateway (gateway/index)");
      session.gateway_url = std::move(*got);
    }
    const std::string host = DescribeGatewayHost(session.gateway_url);
    net::WebSocketConnectRequest request;
    request.url = GatewayConnectUrl(session.gateway_url, session.id, order_.last());
    request.limits.max_message_bytes = kMaxGatewayMessageBytes;
    // KOOK's own PING/PONG supervises the connection; the transport's idle ping only backs it.
    request.limits.idle_timeout = 2 * (kPingInterval + kPingJitter);
    auto conn = co_await context_.websockets->Connect(std::move(request));
    if (!conn) {
      if (conn.error().code == ErrorCode::kCancelled) co_return Attempt::Cancelled();
      if (resuming) ResumeFailed(session);
      co_return Attempt::Retry(fmt::format("cannot connect to the KOOK gateway at {}: {}", host,
                                           Scrub(conn.error().message)));
    }
    Link link{.conn = *conn};
    Ended ended = co_await RunConnection(link, session, resuming);
    if (link.ready) backoff.Connected(link.ready_at);
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
    if (!ended.resume) NewSession(session);
    if (ended.refetch) session.gateway_url.clear();
    if (ended.kind == Ended::Kind::kFatal) co_return Attempt::Fatal(std::move(ended.why));
    if (ended.immediate && link.ready) {
      Log(LogLevel::kInfo, ended.why + "; reconnecting");
      co_return Attempt::Again();
    }
    co_return Attempt::Retry(std::move(ended.why));
  }

  // Forgets the session: the next connection starts a new one from gateway/index, sn from 0.
  void NewSession(Session& session) {
    session.id.clear();
    session.resume_failures = 0;
    order_.Reset();
  }

  void ResumeFailed(Session& session) {
    if (++session.resume_failures < kResumeTries) return;
    Log(LogLevel::kWarning,
        "the KOOK session could not be resumed; starting a new one (events meanwhile are lost)");
    NewSession(session);
    session.gateway_url.clear();
  }

  asio::awaitable<Ended> RunConnection(Link& link, Session& session, bool resuming) {
    auto first = co_await (link.conn->Read() || Pause(kHelloTimeout));
    if (first.index() == 1) {
      if (!std::get<1>(first)) co_return Cancelled();
      if (resuming) ResumeFailed(session);
      co_return Ended{.why = "the KOOK gateway sent no HELLO within 6 s"};
    }
    auto& hello_message = std::get<0>(first);
    if (!hello_message) {
      if (resuming && hello_message.error().code != ErrorCode::kCancelled) ResumeFailed(session);
      co_return ReadFailed(hello_message.error(), link);
    }
    if (hello_message->binary) {
      auto text = InflateFrame(hello_message->data, kMaxGatewayMessageBytes);
      if (text) hello_message->data = std::move(*text);
    }
    auto frame = DecodeSignal(hello_message->data);
    if (frame && frame->s == kSignalReconnect) {
      // KOOK's answer to a resume it cannot grant (40106-40108): the session is gone.
      const std::string detail = DescribeReconnect(frame->d);
      co_return Ended{
          .why = detail.empty()
                     ? "KOOK refused to resume the session (RECONNECT)"
                     : fmt::format("KOOK refused to resume the session (RECONNECT, {})", detail),
          .resume = false,
          .refetch = true};
    }
    if (!frame || frame->s != kSignalHello) {
      if (resuming) ResumeFailed(session);
      co_return Ended{.why = "the KOOK gateway's first frame was not a HELLO"};
    }
    const Hello hello = DecodeHello(frame->d);
    if (hello.code != 0) {
      if (HelloCodeIsFatal(hello.code)) {
        co_return Ended{.kind = Ended::Kind::kFatal,
                        .why = "the KOOK gateway refused the bot: " + DescribeHelloCode(hello.code),
                        .resume = false};
      }
      co_return Ended{
          .why = "the KOOK gateway refused the connection: " + DescribeHelloCode(hello.code),
          .resume = false,
          .refetch = true};
    }
    if (resuming && hello.session_id != session.id) {
      Log(LogLevel::kWarning,
          "KOOK started a new gateway session instead of resuming (events meanwhile are lost)");
      order_.Reset();
    }
    session.id = hello.session_id;
    session.resume_failures = 0;
    link.ready = true;
    link.ready_at = context_.clock->Now();
    context_.host->OnConnected(BotId());
    Log(LogLevel::kInfo,
        resuming
            ? fmt::format("reconnected to the KOOK gateway, resuming after sn {}", order_.last())
            : fmt::format("connected to the KOOK gateway at {}",
                          DescribeGatewayHost(session.gateway_url)));
    auto result = co_await (ReadLoop(link) || PingLoop(link));
    co_return result.index() == 0 ? std::get<0>(std::move(result)) : std::get<1>(std::move(result));
  }

  Ended ReadFailed(const util::Error& error, const Link& link) {
    if (error.code == ErrorCode::kCancelled) return Cancelled();
    const net::WebSocketClose close = link.conn->close_info();
    std::string reason = close.reason.substr(0, 120);
    return Ended{.why =
                     reason.empty()
                         ? fmt::format("KOOK gateway connection lost (close code {})", close.code)
                         : fmt::format("KOOK gateway connection lost (close code {}: {})",
                                       close.code, reason)};
  }

  void Complain(Link& link, std::string text) {
    if (++link.complaints <= kMaxFrameComplaints) Log(LogLevel::kWarning, std::move(text));
  }

  asio::awaitable<Ended> ReadLoop(Link& link) {
    for (;;) {
      auto message = co_await link.conn->Read();
      if (!message) co_return ReadFailed(message.error(), link);
      if (message->binary) {
        // compress=0 was asked for, but a zlib frame is still understood (KOOK's default).
        auto text = InflateFrame(message->data, kMaxGatewayMessageBytes);
        if (!text) {
          Complain(link, "skipped a binary gateway frame: " + text.error().message);
          continue;
        }
        message->data = std::move(*text);
      }
      auto frame = DecodeSignal(message->data);
      if (!frame) {
        Complain(link, "skipped a malformed gateway frame: " + frame.error().message);
        continue;
      }
      switch (frame->s) {
        case kSignalEvent:
          if (!frame->sn) {
            Complain(link, "skipped a gateway event without an sn");
            break;
          }
          for (util::Json& d :
               order_.Accept(*frame->sn, std::move(frame->d), context_.clock->Now())) {
            Deliver(link, d);
          }
          // An event came early: ask for what is missing now (RESUME on a live connection,
          // once per gap) rather than wait for the next PING to show KOOK the gap.
          if (order_.held() > 0 && link.resume_asked_after != order_.last()) {
            link.resume_asked_after = order_.last();
            Log(LogLevel::kInfo, fmt::format("KOOK events after sn {} are missing; asking for them "
                                             "again (RESUME)",
                                             order_.last()));
            auto wrote = co_await link.conn->Write(EncodeResume(order_.last()));
            if (!wrote) co_return ReadFailed(wrote.error(), link);
          }
          break;
        case kSignalPong:
          link.pong_due = false;
          break;
        case kSignalReconnect: {
          const std::string detail = DescribeReconnect(frame->d);
          co_return Ended{
              .why = detail.empty()
                         ? "KOOK asked the bot to reconnect (RECONNECT)"
                         : fmt::format("KOOK asked the bot to reconnect (RECONNECT, {})", detail),
              .resume = false,
              .refetch = true,
              .immediate = true};
        }
        case kSignalResumeAck:
          Log(LogLevel::kInfo,
              fmt::format("KOOK resumed the gateway session (RESUME ACK, sn {})", order_.last()));
          break;
        case kSignalHello:
          break;  // a second HELLO changes nothing
        default:
          Complain(link, fmt::format("skipped a gateway frame with unknown signal {}", frame->s));
          break;
      }
    }
  }

  asio::awaitable<Ended> PingLoop(Link& link) {
    for (;;) {
      const auto jitter = std::chrono::milliseconds(static_cast<std::int64_t>(
          (common::Random01() * 2 - 1) * static_cast<double>(kPingJitter.count())));
      if (!co_await Pause(kPingInterval + jitter)) co_return Cancelled();
      // A gap KOOK did not fill after a PING cycle is given up on, so later events are not held.
      for (util::Json& d : order_.Expire(context_.clock->Now())) Deliver(link, d);
      link.pong_due = true;
      auto wrote = co_await link.conn->Write(EncodePing(order_.last()));
      if (!wrote) co_return Ended{.why = "the KOOK gateway connection failed while sending a PING"};
      if (!co_await Pause(kPongTimeout)) co_return Cancelled();
      if (link.pong_due) {
        co_return Ended{.why = "the KOOK gateway sent no PONG within 6 s", .abort = true};
      }
    }
  }

  std::string BotId() {
    std::lock_guard lock(mu_);
    return bot_id_;
  }

  void Deliver(Link& link, const util::Json& d) {
    auto decoded = DecodeMessageEvent(d, BotId());
    if (!decoded) {
      Complain(link, "skipped a malformed KOOK message event: " + decoded.error().message);
      return;
    }
    // A new session after a failed resume may bring a message again under a new sn.
    if (!recent_.FirstSighting(decoded->msg_id)) return;
    if (decoded->message) context_.host->OnMessage(std::move(*decoded->message));
  }

  const std::string token_;
  KookRest rest_;
  common::RecentIds recent_;
  SnOrder order_;  // touched only by the gateway coroutines (one strand)

  std::mutex mu_;
  std::string bot_id_;  // guarded by mu_; from user/me
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeKookAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::kook
