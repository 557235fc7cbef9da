// The Discord adapter's gateway side: Get Gateway Bot, connect, HELLO, IDENTIFY or RESUME, the
// read loop and the heartbeat loop, reconnects with backoff, and MESSAGE_CREATE handed to the host;
// replies go out through DiscordRest (discord_rest.cpp).
#include "platforms/discord/discord_adapter.hpp"

#include <fmt/format.h>

#include <algorithm>
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
#include "platforms/discord/discord_codec.hpp"
#include "platforms/discord/discord_rest.hpp"

namespace sb::platforms::discord {

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::chrono::milliseconds kHelloTimeout = 20s;
constexpr std::size_t kMaxGatewayMessageBytes = 16 * 1024 * 1024;
constexpr std::size_t kRecentMessages = 1024;  // message ids remembered against redelivery
constexpr int kMaxFrameComplaints = 10;        // logged per connection; the rest are counted

using common::ConfigString;

// Discord tokens are base64url parts joined by dots; anything else (a space, a line break) would
// change the Authorization header, so it is refused before any call.
bool PlausibleToken(std::string_view token) {
  return token.size() >= 8 && token.size() <= 256 &&
         std::all_of(token.begin(), token.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         });
}

// What a gateway session needs to be resumed.
struct Session {
  std::string id;          // empty: none, IDENTIFY
  std::string resume_url;  // READY's resume_gateway_url
  std::optional<std::int64_t> seq;
};

// One open gateway connection, shared by its read loop and its heartbeat loop (both run on the
// same strand).
struct Link {
  std::shared_ptr<net::WebSocketConnection> conn;
  bool acked = true;  // a HEARTBEAT_ACK came since the last heartbeat
  bool ready = false;
  util::TimePoint ready_at{};
  int complaints = 0;
};

// How a connection ended.
struct Ended {
  enum class Kind { kCancelled, kReconnect, kFatal };
  Kind kind = Kind::kReconnect;
  std::string why;
  bool resume = true;            // keep the session for a RESUME
  bool immediate = false;        // Discord asked for it (op 7): no backoff
  bool reidentify_wait = false;  // op 9 false: wait 1-5 s, then IDENTIFY
  bool abort = false;            // drop the TCP connection instead of a close handshake (zombie)
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
              common::ConfigBaseUrl(context_.config, "api_base_url", "https://discord.com/api") +
                  "/v10") {}

  void Start() {
    StartIfMet(
        {{!token_.empty(),
          "no token configured: create a bot in the Discord Developer Portal and paste its token"},
         {PlausibleToken(token_), "the token is not a Discord bot token (letters, digits, . _ -)"},
         {context_.websockets != nullptr,
          "this server has no WebSocket transport for the Discord gateway"}},
        [self = shared_from_this()]() { return self->Run(); });
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = common::MakeSendOnce(std::move(done));
    auto calls = EncodeOutgoing(message, reply_to_message_id);
    if (!calls) {
      (*once)(tl::unexpected(calls.error()));
      return;
    }
    auto shared_calls = std::make_shared<const std::vector<OutboundCall>>(std::move(*calls));
    auto self = shared_from_this();
    SpawnSend(once,
              [self, shared_calls, once, type = message.target_type, target = message.target_id]() {
                return self->rest_.SendAll(type, target, shared_calls, once);
              });
  }

 private:
  std::string Scrub(std::string text) const override { return rest_.Scrub(std::move(text)); }

  // ---- gateway ----

  asio::awaitable<void> Run() {
    co_await asio::this_coro::throw_if_cancelled(false);
    Session session;
    std::string gateway_url;  // cached from Get Gateway Bot, as the docs ask
    co_await common::RunReconnecting(
        *context_.clock, [this](const std::string& why) { Trouble(why); },
        [&](common::ReconnectBackoff& backoff) { return Connect(backoff, session, gateway_url); });
  }

  // One pass of Run: the gateway URL when needed, a connection run until it ends.
  asio::awaitable<common::Attempt> Connect(common::ReconnectBackoff& backoff, Session& session,
                                           std::string& gateway_url) {
    using common::Attempt;
    const bool resuming = !session.id.empty();
    // Asked again before every IDENTIFY: its session start limit says whether one is allowed
    // (going past 1000 a day makes Discord reset the token).
    if (gateway_url.empty() || !resuming) {
      auto got = co_await rest_.GetGatewayBot();
      if (!got) {
        if (got.error().code == ErrorCode::kCancelled) co_return Attempt::Cancelled();
        if (got.error().final) {
          // Retrying a refused token only counts towards Discord's invalid-request ban.
          co_return Attempt::Fatal(got.error().message +
                                   "; fix the token and save the bot to try again");
        }
        co_return Attempt::Retry("cannot get the gateway URL: " + got.error().message);
      }
      gateway_url = std::move(got->url);
      if (!resuming && got->remaining && *got->remaining <= 0) {
        const util::Duration wait = std::max<util::Duration>(got->reset_after, 1s);
        Trouble(
            fmt::format("Discord allows no new gateway session until its daily session start limit "
                        "resets; waiting {} min",
                        (wait.count() + 59'999) / 60'000));
        if (!co_await Pause(wait)) co_return Attempt::Cancelled();
        co_return Attempt::Again();
      }
    }
    const std::string& base =
        resuming && !session.resume_url.empty() ? session.resume_url : gateway_url;
    net::WebSocketConnectRequest request;
    request.url = GatewayConnectUrl(base);
    request.limits.max_message_bytes = kMaxGatewayMessageBytes;
    auto conn = co_await context_.websockets->Connect(std::move(request));
    if (!conn) {
      if (conn.error().code == ErrorCode::kCancelled) co_return Attempt::Cancelled();
      // The docs: when a reconnect fails, go back to the cached URL; when that fails too,
      // ask for it again.
      if (resuming && !session.resume_url.empty()) {
        session.resume_url.clear();
      } else {
        gateway_url.clear();
      }
      co_return Attempt::Retry("cannot connect to the Discord gateway: " +
                               Scrub(conn.error().message));
    }
    Link link{.conn = *conn};
    Ended ended = co_await RunConnection(link, session);
    if (link.ready) backoff.Connected(link.ready_at);
    if (ended.kind == Ended::Kind::kCancelled) {
      // Stop: close with 1000, which ends the session (the bot shows offline).
      co_await asio::this_coro::reset_cancellation_state();
      co_await link.conn->Close(1000, "the bot stopped");
      co_return Attempt::Cancelled();
    }
    if (!ended.resume) session = Session{};
    if (ended.abort) {
      link.conn->Abort();
    } else {
      // Any code but 1000/1001 keeps the session resumable.
      co_await link.conn->Close(4000, "reconnecting");
    }
    link.conn.reset();
    if (ended.kind == Ended::Kind::kFatal) co_return Attempt::Fatal(std::move(ended.why));
    if (ended.immediate && link.ready) {
      Log(LogLevel::kInfo, ended.why + "; reconnecting");
      co_return Attempt::Again();
    }
    if (ended.reidentify_wait && link.ready) {
      // A random 1-5 s before identifying again, as Discord's libraries wait: IDENTIFY is
      // limited to 1000 a day, so a flapping session must not identify in a tight loop.
      Log(LogLevel::kWarning, ended.why);
      const auto wait =
          std::chrono::milliseconds(1000 + static_cast<std::int64_t>(4000 * common::Random01()));
      if (!co_await Pause(wait)) co_return Attempt::Cancelled();
      co_return Attempt::Again();
    }
    co_return Attempt::Retry(std::move(ended.why));
  }

  asio::awaitable<Ended> RunConnection(Link& link, Session& session) {
    auto first = co_await (link.conn->Read() || Pause(kHelloTimeout));
    if (first.index() == 1) {
      if (!std::get<1>(first)) co_return Cancelled();
      co_return Ended{.why = "the gateway sent no HELLO within 20 s"};
    }
    auto& hello_message = std::get<0>(first);
    if (!hello_message) co_return ReadFailed(hello_message.error(), link);
    auto hello = DecodeFrame(hello_message->data);
    std::optional<std::chrono::milliseconds> interval;
    if (hello && hello->op == kOpHello) {
      if (auto i = DecodeHello(hello->d)) interval = *i;
    }
    if (!interval) co_return Ended{.why = "the gateway's first frame was not a valid HELLO"};

    const bool resuming = !session.id.empty();
    const std::string handshake =
        resuming ? EncodeResume(token_, session.id, session.seq) : EncodeIdentify(token_);
    auto wrote = co_await link.conn->Write(handshake);
    if (!wrote) co_return Ended{.why = "the gateway closed before IDENTIFY"};
    auto result = co_await (ReadLoop(link, session) || HeartbeatLoop(link, session, *interval));
    co_return result.index() == 0 ? std::get<0>(std::move(result)) : std::get<1>(std::move(result));
  }

  Ended ReadFailed(const util::Error& error, const Link& link) {
    if (error.code == ErrorCode::kCancelled) return Cancelled();
    const net::WebSocketClose close = link.conn->close_info();
    Ended ended;
    ended.why = "gateway connection lost: " + DescribeClose(close.code, close.reason);
    switch (ClassifyClose(close.code)) {
      case CloseAction::kFatal:
        ended.kind = Ended::Kind::kFatal;
        ended.why = "the Discord gateway refused the bot: " + DescribeClose(close.code, "");
        ended.resume = false;
        break;
      case CloseAction::kIdentify:
        ended.resume = false;
        break;
      case CloseAction::kResume:
        break;
    }
    return ended;
  }

  void Complain(Link& link, std::string text) {
    if (++link.complaints <= kMaxFrameComplaints) Log(LogLevel::kWarning, std::move(text));
  }

  asio::awaitable<Ended> ReadLoop(Link& link, Session& session) {
    for (;;) {
      auto message = co_await link.conn->Read();
      if (!message) co_return ReadFailed(message.error(), link);
      if (message->binary) {
        Complain(link, "skipped a binary gateway frame (the bot asked for JSON)");
        continue;
      }
      auto frame = DecodeFrame(message->data);
      if (!frame) {
        Complain(link, "skipped a malformed gateway frame: " + frame.error().message);
        continue;
      }
      if (frame->s) session.seq = frame->s;
      switch (frame->op) {
        case kOpDispatch:
          if (auto ended = Dispatch(link, session, *frame)) co_return std::move(*ended);
          break;
        case kOpHeartbeat: {
          // Discord asks for a heartbeat now.
          auto wrote = co_await link.conn->Write(EncodeHeartbeat(session.seq));
          if (!wrote) co_return Ended{.why = "the gateway connection failed while heartbeating"};
          break;
        }
        case kOpHeartbeatAck:
          link.acked = true;
          break;
        case kOpReconnect:
          co_return Ended{.why = "Discord asked the bot to reconnect (op 7)", .immediate = true};
        case kOpInvalidSession:
          if (DecodeInvalidSession(frame->d)) {
            co_return Ended{.why = "Discord invalidated the session (op 9, resumable)",
                            .immediate = true};
          }
          co_return Ended{.why = "Discord invalidated the session (op 9); identifying again",
                          .resume = false,
                          .reidentify_wait = true};
        case kOpHello:
          break;  // a second HELLO changes nothing
        default:
          Complain(link, fmt::format("skipped a gateway frame with unknown opcode {}", frame->op));
          break;
      }
    }
  }

  // A dispatch (op 0). Returns how the connection ends when the dispatch ends it.
  std::optional<Ended> Dispatch(Link& link, Session& session, const GatewayFrame& frame) {
    if (frame.t == "READY") {
      auto ready = DecodeReady(frame.d);
      if (!ready) {
        return Ended{.why = "the gateway's READY was malformed: " + ready.error().message,
                     .resume = false};
      }
      session.id = ready->session_id;
      session.resume_url = ready->resume_gateway_url;
      {
        std::lock_guard lock(mu_);
        bot_id_ = ready->user_id;
      }
      MarkReady(link);
      Log(LogLevel::kInfo, fmt::format("connected to the Discord gateway as {} ({})",
                                       ready->username, ready->user_id));
    } else if (frame.t == "RESUMED") {
      MarkReady(link);
      Log(LogLevel::kInfo, "resumed the Discord gateway session");
    } else if (frame.t == "MESSAGE_CREATE") {
      Deliver(link, frame.d);
    }
    return std::nullopt;
  }

  void MarkReady(Link& link) {
    link.ready = true;
    link.ready_at = context_.clock->Now();
    context_.host->OnConnected(BotId());
  }

  std::string BotId() {
    std::lock_guard lock(mu_);
    return bot_id_;
  }

  void Deliver(Link& link, const util::Json& d) {
    auto decoded = DecodeMessageCreate(d, BotId());
    if (!decoded) {
      Complain(link, "skipped a malformed MESSAGE_CREATE: " + decoded.error().message);
      return;
    }
    if (!decoded->message) return;
    domain::ReceivedMessage& message = *decoded->message;
    if (!seen_.FirstSighting(message.message_id)) return;  // a resume may replay it
    if (message.chat_type == domain::TargetType::kPerson) {
      rest_.RememberDm(message.sender_id, decoded->channel_id);
    }
    context_.host->OnMessage(std::move(message));
  }

  asio::awaitable<Ended> HeartbeatLoop(Link& link, Session& session,
                                       std::chrono::milliseconds interval) {
    // The first beat comes after interval x jitter, so that many clients do not beat in step.
    auto wait = std::chrono::milliseconds(
        static_cast<std::int64_t>(static_cast<double>(interval.count()) * common::Random01()));
    for (;;) {
      if (!co_await Pause(wait)) co_return Cancelled();
      if (!link.acked) {
        co_return Ended{.why = "the gateway did not acknowledge a heartbeat (zombie connection)",
                        .abort = true};
      }
      link.acked = false;
      auto wrote = co_await link.conn->Write(EncodeHeartbeat(session.seq));
      if (!wrote) co_return Ended{.why = "the gateway connection failed while heartbeating"};
      wait = interval;
    }
  }

  const std::string token_;
  DiscordRest rest_;
  common::RecentIds seen_{kRecentMessages};  // message ids already handed on

  std::mutex mu_;
  std::string bot_id_;  // guarded by mu_; from READY
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeDiscordAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::discord
