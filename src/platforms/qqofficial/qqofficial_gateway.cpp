#include "platforms/qqofficial/qqofficial_gateway.hpp"

#include <fmt/format.h>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <optional>
#include <utility>
#include <variant>

#include "net/websocket.hpp"
#include "platforms/common/clock_waits.hpp"

namespace sb::platforms::qqofficial {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using domain::LogLevel;
using util::ErrorCode;

namespace {

constexpr std::chrono::milliseconds kHelloTimeout = 20s;
constexpr std::chrono::milliseconds kRateLimitWait = 60s;  // after close 4008, as LangBot waits
constexpr std::size_t kMaxGatewayMessageBytes = 4 * 1024 * 1024;
constexpr int kMaxFrameComplaints = 10;  // logged per connection; the rest are dropped silently

// op 9's d: QQ sends false; LangBot also reads {"can_resume": true}.
bool Resumable(const util::Json& d) {
  if (d.is_bool()) return d.get_bool();
  if (d.is_object()) {
    const util::Json* v = d.get_object().if_contains("can_resume");
    return v != nullptr && v->is_bool() && v->get_bool();
  }
  return false;
}

}  // namespace

struct QqGateway::Session {
  std::string id;  // empty: none, IDENTIFY
  std::optional<std::int64_t> seq;
};

// One open connection, shared by its read loop and its heartbeat loop (the same strand).
struct QqGateway::Link {
  std::shared_ptr<net::WebSocketConnection> conn;
  bool acked = true;  // a HEARTBEAT_ACK came since the last heartbeat
  bool ready = false;
  util::TimePoint ready_at{};
  int complaints = 0;
};

struct QqGateway::Ended {
  enum class Kind { kCancelled, kReconnect, kFatal };
  Kind kind = Kind::kReconnect;
  std::string why{};
  bool resume = true;      // keep the session for a RESUME
  bool immediate = false;  // QQ asked for it (op 7): no backoff
  bool new_token = false;  // 4004: the token was refused
  bool slow_down = false;  // 4008: wait a minute
  bool abort = false;      // drop the TCP connection instead of a close handshake (zombie)
};

QqGateway::QqGateway(const AdapterContext& context, QqRest& rest, GatewayEvents events)
    : context_(context), rest_(rest), events_(std::move(events)) {}

void QqGateway::Log(LogLevel level, std::string text) {
  context_.host->Log(level, rest_.Scrub(std::move(text)));
}

void QqGateway::Trouble(const std::string& why) { context_.host->OnTrouble(rest_.Scrub(why)); }

void QqGateway::Complain(Link& link, std::string text) {
  if (++link.complaints <= kMaxFrameComplaints) Log(LogLevel::kWarning, std::move(text));
}

asio::awaitable<void> QqGateway::Run() {
  co_await asio::this_coro::throw_if_cancelled(false);
  Session session;
  bool renew_token = false;
  co_await common::RunReconnecting(
      *context_.clock, [this](const std::string& why) { Trouble(why); },
      [&](common::ReconnectBackoff& backoff) { return Connect(backoff, session, renew_token); });
}

asio::awaitable<common::Attempt> QqGateway::Connect(common::ReconnectBackoff& backoff,
                                                    Session& session, bool& renew_token) {
  using common::Attempt;
  auto token = co_await rest_.Token(renew_token);
  std::optional<util::Error> failed;
  std::string url;
  if (!token) {
    failed = token.error();
  } else if (auto got = co_await rest_.GatewayUrl(); !got) {
    failed = got.error();
  } else {
    url = std::move(*got);
  }
  if (failed) {
    if (failed->code == ErrorCode::kCancelled) co_return Attempt::Cancelled();
    if (failed->final) {
      co_return Attempt::Fatal(failed->message +
                               "; fix the appid and secret and save the bot to try again");
    }
    co_return Attempt::Retry(failed->message);
  }
  renew_token = false;
  net::WebSocketConnectRequest request;
  request.url = url;
  request.limits.max_message_bytes = kMaxGatewayMessageBytes;
  auto conn = co_await context_.websockets->Connect(std::move(request));
  if (!conn) {
    if (conn.error().code == ErrorCode::kCancelled) co_return Attempt::Cancelled();
    co_return Attempt::Retry("cannot connect to the QQ gateway: " + conn.error().message);
  }
  Link link{.conn = *conn};
  Ended ended = co_await RunConnection(link, session, *token);
  if (link.ready) backoff.Connected(link.ready_at);
  if (ended.kind == Ended::Kind::kCancelled) {
    co_await asio::this_coro::reset_cancellation_state();
    co_await link.conn->Close(1000, "the bot stopped");
    co_return Attempt::Cancelled();
  }
  if (!ended.resume) session = Session{};
  renew_token = ended.new_token;
  if (ended.abort) {
    link.conn->Abort();
  } else {
    co_await link.conn->Close(4000, "reconnecting");
  }
  link.conn.reset();
  if (ended.kind == Ended::Kind::kFatal) co_return Attempt::Fatal(std::move(ended.why));
  if (ended.immediate && link.ready) {
    Log(LogLevel::kInfo, ended.why + "; reconnecting");
    co_return Attempt::Again();
  }
  if (ended.slow_down) {
    Trouble(ended.why + "; waiting a minute before reconnecting");
    if (!co_await common::Sleep(*context_.clock, kRateLimitWait)) co_return Attempt::Cancelled();
    co_return Attempt::Again();
  }
  co_return Attempt::Retry(std::move(ended.why));
}

asio::awaitable<QqGateway::Ended> QqGateway::RunConnection(Link& link, Session& session,
                                                           const std::string& token) {
  auto first = co_await (link.conn->Read() || common::Sleep(*context_.clock, kHelloTimeout));
  if (first.index() == 1) {
    if (!std::get<1>(first)) co_return Ended{.kind = Ended::Kind::kCancelled};
    co_return Ended{.why = "the QQ gateway sent no HELLO within 20 s"};
  }
  auto& hello_message = std::get<0>(first);
  if (!hello_message) co_return ReadFailed(hello_message.error(), link);
  auto hello = DecodePayload(hello_message->data);
  std::optional<std::chrono::milliseconds> interval;
  if (hello && hello->op == kOpHello) {
    if (auto i = DecodeHello(hello->d)) interval = *i;
  }
  if (!interval) co_return Ended{.why = "the QQ gateway's first frame was not a valid HELLO"};

  const bool resuming = !session.id.empty() && session.seq;
  const std::string handshake =
      resuming ? EncodeResume(token, session.id, *session.seq) : EncodeIdentify(token, kIntents);
  if (!resuming) session = Session{};
  auto wrote = co_await link.conn->Write(handshake);
  if (!wrote) co_return Ended{.why = "the QQ gateway closed before IDENTIFY"};
  auto result = co_await (ReadLoop(link, session) || HeartbeatLoop(link, session, *interval));
  co_return result.index() == 0 ? std::get<0>(std::move(result)) : std::get<1>(std::move(result));
}

QqGateway::Ended QqGateway::ReadFailed(const util::Error& error, const Link& link) {
  if (error.code == ErrorCode::kCancelled) return Ended{.kind = Ended::Kind::kCancelled};
  const net::WebSocketClose close = link.conn->close_info();
  Ended ended;
  ended.why = "QQ gateway connection lost: " + DescribeClose(close.code, close.reason);
  switch (ClassifyClose(close.code)) {
    case CloseAction::kFatal:
      ended.kind = Ended::Kind::kFatal;
      ended.why = "the QQ gateway refused the bot: " + DescribeClose(close.code, close.reason);
      ended.resume = false;
      break;
    case CloseAction::kNewToken:
      ended.new_token = true;
      ended.resume = false;
      break;
    case CloseAction::kIdentify:
      ended.resume = false;
      break;
    case CloseAction::kWait:
      ended.slow_down = true;
      break;
    case CloseAction::kResume:
      break;
  }
  return ended;
}

asio::awaitable<QqGateway::Ended> QqGateway::ReadLoop(Link& link, Session& session) {
  for (;;) {
    auto message = co_await link.conn->Read();
    if (!message) co_return ReadFailed(message.error(), link);
    if (message->binary) {
      Complain(link, "skipped a binary QQ gateway frame");
      continue;
    }
    auto frame = DecodePayload(message->data);
    if (!frame) {
      Complain(link, "skipped a malformed QQ gateway frame: " + frame.error().message);
      continue;
    }
    if (frame->s && *frame->s > 0) session.seq = frame->s;
    switch (frame->op) {
      case kOpDispatch:
        if (frame->t == "READY") {
          auto ready = DecodeReady(frame->d);
          if (!ready) {
            co_return Ended{.why = "the QQ gateway's READY was malformed: " + ready.error().message,
                            .resume = false};
          }
          session.id = ready->session_id;
          link.ready = true;
          link.ready_at = context_.clock->Now();
          events_.ready(*ready);
        } else if (frame->t == "RESUMED") {
          link.ready = true;
          link.ready_at = context_.clock->Now();
          events_.resumed();
        } else {
          events_.dispatch(*frame);
        }
        break;
      case kOpHeartbeat: {
        auto wrote = co_await link.conn->Write(EncodeHeartbeat(session.seq));
        if (!wrote) co_return Ended{.why = "the QQ gateway connection failed while heartbeating"};
        break;
      }
      case kOpHeartbeatAck:
        link.acked = true;
        break;
      case kOpReconnect:
        co_return Ended{.why = "QQ asked the bot to reconnect (op 7)", .immediate = true};
      case kOpInvalidSession:
        if (Resumable(frame->d)) {
          co_return Ended{.why = "QQ invalidated the connection (op 9, resumable)",
                          .immediate = true};
        }
        // The session is gone; LangBot also fetches a new token before identifying again.
        co_return Ended{.why = "QQ invalidated the session (op 9); identifying again",
                        .resume = false,
                        .immediate = true,
                        .new_token = true};
      case kOpHello:
        break;
      default:
        Complain(link, fmt::format("skipped a QQ gateway frame with unknown opcode {}", frame->op));
        break;
    }
  }
}

asio::awaitable<QqGateway::Ended> QqGateway::HeartbeatLoop(Link& link, Session& session,
                                                           std::chrono::milliseconds interval) {
  // The first beat after interval x jitter, so that reconnecting clients do not beat in step.
  auto wait = std::chrono::milliseconds(static_cast<std::int64_t>(
      static_cast<double>(interval.count()) * (0.5 + 0.5 * common::Random01())));
  for (;;) {
    if (!co_await common::Sleep(*context_.clock, wait)) {
      co_return Ended{.kind = Ended::Kind::kCancelled};
    }
    if (!link.acked) {
      co_return Ended{.why = "the QQ gateway did not acknowledge a heartbeat (zombie connection)",
                      .abort = true};
    }
    link.acked = false;
    auto wrote = co_await link.conn->Write(EncodeHeartbeat(session.seq));
    if (!wrote) co_return Ended{.why = "the QQ gateway connection failed while heartbeating"};
    wait = interval;
  }
}

}  // namespace sb::platforms::qqofficial
