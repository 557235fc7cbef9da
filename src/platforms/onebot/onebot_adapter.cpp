// The aiocqhttp adapter: listens for OneBot v11 reverse WebSocket connections, reads each one
// (frames decoded by onebot_codec), routes sends to the right account and answers them by echo.
// The parts of its state live apart: onebot_connection (one socket and its writer),
// onebot_registry (slots, routes, liveness), onebot_pending (actions waiting for an answer),
// and onebot_upgrade judges each upgrade request.
#include "platforms/onebot/onebot_adapter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "domain/message_text.hpp"
#include "net/websocket.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/onebot/onebot_codec.hpp"
#include "platforms/onebot/onebot_connection.hpp"
#include "platforms/onebot/onebot_pending.hpp"
#include "platforms/onebot/onebot_registry.hpp"
#include "platforms/onebot/onebot_upgrade.hpp"

namespace sb::platforms::onebot {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using domain::LogLevel;
using util::ErrorCode;

// An action the implementation has not answered within this long fails with kUpstreamTimeout
// (aiocqhttp waits 60 s; a reply that late is of no use to a chat).
constexpr util::Duration kActionTimeout = 30s;
// The get_msg for a quoted message holds its message back until answered: a short wait, after
// which the message goes on without the quoted text.
constexpr util::Duration kLookupTimeout = 5s;
// The name a forward message's node shows for the bot (LangBot shows "User").
constexpr std::string_view kForwardNickname = "Bot";
// Deadlines, heartbeats and the flood window are checked on this tick.
constexpr util::Duration kTick = 500ms;
// A frame above the soft limit is skipped (logged, counted); above the hard one the transport
// closes the connection (1009). NapCat's own maximum is 50 MB; events carry URLs, not bytes.
constexpr std::size_t kSoftFrameLimit = 1 << 20;
constexpr std::size_t kHardFrameLimit = 4 << 20;
// More bad frames than this within one window closes the connection (1008).
constexpr int kMaxBadFrames = 50;
constexpr util::Duration kBadFrameWindow = 10s;
constexpr int kLoggedBadFrames = 5;  // per window; the rest are only counted
constexpr std::size_t kMaxConnections = 2048;

// The first header of that lower-case name (the transport lower-cases names); empty when absent.
std::string_view HeaderOf(const net::WebSocketUpgrade& up, std::string_view name) {
  for (const auto& [key, value] : up.headers) {
    if (key == name) return value;
  }
  return {};
}

UpgradeCheck Check(const net::WebSocketUpgrade& up, std::string_view token) {
  return CheckUpgrade(up.target, HeaderOf(up, "authorization"), HeaderOf(up, "x-self-id"),
                      HeaderOf(up, "x-client-role"), token);
}

std::int64_t Millis(util::TimePoint t) { return util::ToUnixMillis(t); }

class Core : public std::enable_shared_from_this<Core> {
 public:
  explicit Core(AdapterContext context)
      : context_(std::move(context)),
        host_(*context_.host),
        clock_(*context_.clock),
        listen_host_(common::ConfigString(context_.config, "host", "0.0.0.0")),
        port_(common::ConfigInt(context_.config, "port", 2280)),
        token_(common::ConfigString(context_.config, "access-token")),
        group_(CoroutineGroup::Make(context_.executor)) {
    if (listen_host_.empty()) listen_host_ = "0.0.0.0";
    if (listen_host_ == "localhost") listen_host_ = "127.0.0.1";  // the listener takes addresses
  }

  void Start() {
    if (port_ < 0 || port_ > 65535) {
      host_.OnTrouble(fmt::format("port {} is not a TCP port (0-65535)", port_));
      return;
    }
    if (!context_.websockets) {
      host_.OnTrouble("this server has no WebSocket transport");
      return;
    }
    Listen();
    ScheduleTick();
  }

  void Stop(std::function<void()> stopped) {
    std::shared_ptr<net::WebSocketListener> listener;
    std::vector<Pending> pending;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stopping_ = true;
      listener = std::move(listener_);
      pending = pending_.TakeAll();
      registry_.ReleaseSlots();
    }
    retry_timer_.Cancel();
    tick_timer_.Cancel();
    for (Pending& p : pending) {
      if (p.done)
        (*p.done)(util::Fail(ErrorCode::kCancelled, "the bot stopped before OneBot answered"));
    }
    // Two things end asynchronously: the listener (which closes every accepted socket) and
    // the coroutines (read loops, writers). `stopped` runs after both.
    auto remaining = std::make_shared<std::atomic<int>>(2);
    auto one_done = [remaining, stopped = std::move(stopped)]() {
      if (remaining->fetch_sub(1) == 1 && stopped) stopped();
    };
    if (listener) {
      // The handle stays alive until its Stop completes: the Beast listener forgets a pending
      // `stopped` when its handle goes first (reported to the ws branch).
      listener->Stop([listener, one_done]() mutable {
        one_done();
        listener.reset();
      });
    } else {
      one_done();
    }
    group_->Close(one_done);
  }

  void Abandon() { Stop(nullptr); }

  // Quoting is the pipeline's choice (a Quote element, from quote-origin), not the adapter's, so
  // `reply_to_message_id` is not used.
  void Send(domain::OutgoingMessage message, std::string /*reply_to_message_id*/, SendDone done) {
    auto once = common::MakeSendOnce(std::move(done));
    if (WantsForward(message)) {
      SendForward(std::move(message), std::move(once));
    } else {
      SendNormal(message, std::move(once));
    }
  }

 private:
  // send_private_msg / send_group_msg.
  void SendNormal(const domain::OutgoingMessage& message, std::shared_ptr<common::SendOnce> once) {
    auto action = EncodeSend(message);
    if (!action) {
      (*once)(tl::unexpected(action.error()));
      return;
    }
    std::shared_ptr<Conn> conn;
    std::string echo;
    {
      std::lock_guard lock(mu_);
      if (stopping_) {
        (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
        return;
      }
      conn = registry_.RouteFor(message);
      if (!conn) {
        (*once)(util::Fail(ErrorCode::kUpstreamUnreachable,
                           "no OneBot implementation is connected to this bot"));
        return;
      }
      echo = pending_.Add(
          Pending{once, {}, conn->serial, action->action, clock_.Now() + kActionTimeout});
    }
    if (!Enqueue(*conn, EncodeActionFrame(*action, echo))) {
      FailPending(echo, {ErrorCode::kUpstreamUnreachable,
                         "the OneBot connection closed before the message went out"});
    }
  }

  // The long-text strategy "forward". An implementation without the go-cqhttp forward actions
  // (the standard has none) refuses it: the reply then goes out as ordinary messages. Only a
  // refusal falls back; a forward left unanswered may have been posted, so it is not repeated.
  void SendForward(domain::OutgoingMessage message, std::shared_ptr<common::SendOnce> once) {
    std::shared_ptr<Conn> conn;
    {
      std::lock_guard lock(mu_);
      if (!stopping_) conn = registry_.RouteFor(message);
    }
    util::Result<Action> action = conn ? EncodeForward(message, conn->SelfId(), kForwardNickname)
                                       : util::Fail(ErrorCode::kUpstreamUnreachable, "no route");
    if (!action) return SendNormal(message, std::move(once));
    std::weak_ptr<Core> weak = weak_from_this();
    auto forward_done =
        common::MakeSendOnce([weak, message, once](util::Result<domain::SendReceipt> sent) mutable {
          auto self = weak.lock();
          if (sent || sent.error().code != ErrorCode::kUpstreamFailed || !self) {
            return (*once)(std::move(sent));
          }
          self->host_.Log(LogLevel::kWarning,
                          fmt::format("the long reply could not go out as a forward message ({}); "
                                      "sent as ordinary messages",
                                      sent.error().message));
          self->SendNormal(message, std::move(once));
        });
    std::string echo;
    {
      std::lock_guard lock(mu_);
      if (stopping_) {
        (*forward_done)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
        return;
      }
      echo = pending_.Add(
          Pending{forward_done, {}, conn->serial, action->action, clock_.Now() + kActionTimeout});
    }
    if (!Enqueue(*conn, EncodeActionFrame(*action, echo))) {
      FailPending(echo, {ErrorCode::kUpstreamUnreachable,
                         "the OneBot connection closed before the message went out"});
    }
  }

  // ---- listening ------------------------------------------------------------------------

  void Listen() {
    net::WebSocketListenOptions options;
    options.host = listen_host_;
    options.port = static_cast<std::uint16_t>(port_);
    options.limits.max_message_bytes = kHardFrameLimit;
    options.max_connections = kMaxConnections;
    std::weak_ptr<Core> weak = weak_from_this();
    auto accept = [weak, token = token_](const net::WebSocketUpgrade& up) {
      UpgradeCheck check = Check(up, token);
      if (check.status != 0) {
        if (auto self = weak.lock()) self->Refused(up, check);
      }
      return net::WebSocketVerdict{check.status, check.body};
    };
    auto opened = [weak](std::shared_ptr<net::WebSocketConnection> ws, net::WebSocketUpgrade up) {
      auto self = weak.lock();
      if (!self) {
        ws->Abort();
        return;
      }
      self->Opened(std::move(ws), std::move(up));
    };
    auto listener = context_.websockets->Listen(options, accept, opened);
    if (!listener && listener.error().code == ErrorCode::kInvalidArgument) {
      // A host that is no IP address: trying again cannot help.
      host_.OnTrouble(listener.error().message + "; set host to an IP address such as 0.0.0.0");
      return;
    }
    if (!listener) {
      util::Duration delay;
      std::string retry;
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        delay = backoff_.NextDelay(clock_.Now());
        retry = backoff_.Describe(delay);
      }
      had_trouble_ = true;
      host_.OnTrouble(fmt::format("{}; {}", listener.error().message, retry));
      auto timer = clock_.After(delay, [weak] {
        auto self = weak.lock();
        if (!self) return;
        // Through the group: Stop waits for it, and no host call follows the stop.
        self->group_->Spawn([self]() -> asio::awaitable<void> {
          self->Listen();
          co_return;
        });
      });
      std::lock_guard lock(mu_);
      if (stopping_) {
        timer.Cancel();
      } else {
        retry_timer_ = timer;
      }
      return;
    }
    bool keep = false;
    {
      std::lock_guard lock(mu_);
      if (!stopping_) {
        listener_ = *listener;
        backoff_.Connected(clock_.Now());
        keep = true;
      }
    }
    if (!keep) {
      (*listener)->Stop(nullptr);
      return;
    }
    host_.Log(LogLevel::kInfo, fmt::format("listening for OneBot reverse WebSocket connections on "
                                           "ws://{}:{}/ws",
                                           listen_host_, (*listener)->port()));
    // Listening is being able to receive: the bot runs, and names its account once an
    // implementation connects (X-Self-ID).
    if (had_trouble_.exchange(false)) host_.Log(LogLevel::kInfo, "the port is free again");
    host_.OnConnected("");
  }

  // A refused upgrade: logged without the token (CheckUpgrade's text never holds one).
  void Refused(const net::WebSocketUpgrade& up, const UpgradeCheck& check) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      ++refused_;
      if (refused_ > 20 && refused_ % 100 != 0) return;  // a reconnecting client retries forever
    }
    host_.Log(LogLevel::kWarning, fmt::format("refused a OneBot connection from {} ({}): {}",
                                              up.remote_address, check.status, check.body));
  }

  void Opened(std::shared_ptr<net::WebSocketConnection> ws, net::WebSocketUpgrade up) {
    auto conn = std::make_shared<Conn>();
    conn->ws = std::move(ws);
    UpgradeCheck check = Check(up, token_);
    conn->role = check.role;
    conn->self_id = check.self_id;
    conn->remote = up.remote_address;
    conn->serial = ++serial_;
    conn->last_frame_ms = Millis(clock_.Now());
    auto self = shared_from_this();
    const bool started = group_->Spawn([self, conn]() { return self->Serve(conn); }) &&
                         group_->Spawn([conn]() { return RunWriter(conn); });
    if (!started) conn->ws->Abort();
  }

  // ---- one connection -------------------------------------------------------------------

  asio::awaitable<void> Serve(std::shared_ptr<Conn> conn) {
    co_await asio::this_coro::throw_if_cancelled(false);
    {
      std::lock_guard lock(mu_);
      registry_.AddLive(conn);
    }
    const std::string self_id = conn->SelfId();
    host_.Log(
        LogLevel::kInfo,
        fmt::format("OneBot implementation connected from {} (X-Self-ID {}, role {})", conn->remote,
                    self_id.empty() ? "absent" : self_id, RoleName(conn->role)));
    if (!self_id.empty()) {
      Register(conn);
    } else if (conn->CanSend()) {
      // No X-Self-ID: ask who the account is (the first event's self_id also does).
      std::string echo;
      {
        std::lock_guard lock(mu_);
        echo = pending_.Add(
            Pending{nullptr, conn, conn->serial, "get_login_info", clock_.Now() + kActionTimeout});
      }
      Enqueue(*conn, EncodeActionFrame(Action{"get_login_info", {}}, echo));
    }
    for (;;) {
      auto message = co_await conn->ws->Read();
      if (!message) break;
      conn->last_frame_ms = Millis(clock_.Now());
      HandleFrame(conn, message->data, message->binary);
    }
    co_await Ended(conn);
  }

  void HandleFrame(const std::shared_ptr<Conn>& conn, const std::string& data, bool binary) {
    if (data.size() > kSoftFrameLimit) {
      BadFrame(*conn, fmt::format("a frame of {} bytes (over the {} byte limit)", data.size(),
                                  kSoftFrameLimit));
      return;
    }
    if (binary) {
      BadFrame(*conn, "a binary frame (OneBot frames are JSON text)");
      return;
    }
    std::string self_id = conn->SelfId();
    auto frame = DecodeFrame(data, self_id);
    if (!frame) {
      BadFrame(*conn, frame.error().message);
      return;
    }
    if (self_id.empty() && !frame->self_id.empty() && frame->kind != FrameKind::kResponse) {
      AdoptSelfId(conn, frame->self_id);
      self_id = frame->self_id;
    }
    switch (frame->kind) {
      case FrameKind::kMessage:
        if (std::string shown = RememberRoute(*frame->message, self_id); shown != self_id) {
          // The host knows the bot by one account id (the newest connection's): a mention of
          // this connection's account is a mention of the bot, so it is named by that id.
          for (auto& element : frame->message->chain) {
            if (element.type == domain::ElementType::kAt && element.target == self_id) {
              element.target = shown;
            }
          }
        }
        LookUpQuoteThenDeliver(conn, std::move(*frame->message));
        break;
      case FrameKind::kMeta:
        if (frame->meta.kind == MetaKind::kHeartbeat) {
          conn->heartbeat_ms = frame->meta.interval_ms;
        } else if (frame->meta.kind == MetaKind::kLifecycle) {
          host_.Log(LogLevel::kInfo,
                    fmt::format("OneBot {} lifecycle: {}", self_id, frame->meta.sub_type));
        }
        break;
      case FrameKind::kResponse:
        Answered(std::move(frame->response));
        break;
      case FrameKind::kIgnored:
        break;
    }
  }

  // A reply segment carries only the quoted message's id: its text comes from get_msg (as
  // LangBot does), asked on the connection the message came by. The message waits for the answer
  // (kLookupTimeout at most) and goes on without the text when there is none.
  void LookUpQuoteThenDeliver(const std::shared_ptr<Conn>& conn, domain::ReceivedMessage message) {
    auto quote = std::find_if(message.chain.begin(), message.chain.end(), [](const auto& e) {
      return e.type == domain::ElementType::kQuote && e.text.empty() && !e.id.empty();
    });
    if (quote == message.chain.end() || !conn->CanSend()) {
      host_.OnMessage(std::move(message));
      return;
    }
    const std::size_t index = static_cast<std::size_t>(quote - message.chain.begin());
    const Action action = EncodeGetMsg(quote->id);
    auto held = std::make_shared<domain::ReceivedMessage>(std::move(message));
    std::weak_ptr<Core> weak = weak_from_this();
    Pending pending{nullptr, {}, conn->serial, action.action, clock_.Now() + kLookupTimeout};
    pending.lookup = [weak, held, index](const ActionResponse* answer) {
      auto self = weak.lock();
      if (!self) return;
      domain::MessageElement& q = held->chain[index];
      if (answer != nullptr && answer->ok) {
        q = domain::MakeQuote(std::move(q.id), answer->message_text, answer->sender_id);
      } else {
        self->host_.Log(LogLevel::kInfo,
                        fmt::format("the quoted message {:.64} could not be read ({}); the message "
                                    "goes on without its text",
                                    q.id,
                                    answer == nullptr         ? "no answer"
                                    : answer->failure.empty() ? std::to_string(answer->retcode)
                                                              : answer->failure));
      }
      self->host_.OnMessage(std::move(*held));
    };
    std::string echo;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      echo = pending_.Add(std::move(pending));
    }
    if (!Enqueue(*conn, EncodeActionFrame(action, echo))) FailLookup(echo);
  }

  void FailLookup(const std::string& echo) {
    std::optional<Pending> p;
    {
      std::lock_guard lock(mu_);
      p = pending_.Take(echo);
    }
    if (p && p->lookup) p->lookup(nullptr);
  }

  void BadFrame(Conn& conn, const std::string& why) {
    const std::int64_t now = Millis(clock_.Now());
    if (now - conn.bad_window_start_ms > kBadFrameWindow.count()) {
      if (conn.bad_frames > kLoggedBadFrames) {
        host_.Log(LogLevel::kWarning, fmt::format("skipped {} more bad OneBot frames from {}",
                                                  conn.bad_frames - kLoggedBadFrames, conn.remote));
      }
      conn.bad_window_start_ms = now;
      conn.bad_frames = 0;
    }
    ++conn.bad_frames;
    std::uint64_t total = 0;
    {
      std::lock_guard lock(mu_);
      total = ++bad_frames_total_;
    }
    if (conn.bad_frames <= kLoggedBadFrames) {
      host_.Log(LogLevel::kWarning,
                fmt::format("skipped a bad OneBot frame from {} ({} so far): {}", conn.remote,
                            total, why.substr(0, 200)));
    }
    if (conn.bad_frames == kMaxBadFrames + 1) {
      host_.Log(
          LogLevel::kError,
          fmt::format("closed the OneBot connection from {}: over {} bad frames in {} s",
                      conn.remote, kMaxBadFrames,
                      std::chrono::duration_cast<std::chrono::seconds>(kBadFrameWindow).count()));
      Drop(conn, 1008, "too many malformed frames");
    }
  }

  void AdoptSelfId(const std::shared_ptr<Conn>& conn, const std::string& self_id) {
    {
      std::lock_guard lock(conn->mu);
      if (!conn->self_id.empty()) return;
      conn->self_id = self_id;
    }
    Register(conn);
  }

  // Returns the account id the host currently knows the bot by.
  std::string RememberRoute(const domain::ReceivedMessage& message, const std::string& self_id) {
    std::lock_guard lock(mu_);
    return registry_.RememberRoute(message, self_id);
  }

  // The connection holds the slot of its account and role: an older one there is closed.
  void Register(const std::shared_ptr<Conn>& conn) {
    const std::string self_id = conn->SelfId();
    std::shared_ptr<Conn> older;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      {
        std::lock_guard c(conn->mu);
        if (conn->ended) return;
        conn->registered = true;
      }
      older = registry_.Claim(conn, self_id);
    }
    if (older) {
      {
        std::lock_guard c(older->mu);
        older->replaced = true;
      }
      host_.Log(LogLevel::kInfo, fmt::format("a newer OneBot connection for {} replaces the one "
                                             "from {}",
                                             self_id, older->remote));
      Drop(*older, 1000, "replaced by a newer connection");
    }
    host_.OnConnected(self_id);
  }

  // Closes a connection from any thread; its read loop then ends it.
  void Drop(Conn& conn, int code, std::string reason) {
    if (conn.dropping.exchange(true)) return;
    auto ws = conn.ws;
    const bool spawned = group_->Spawn(
        [ws, code, reason]() -> asio::awaitable<void> { co_await ws->Close(code, reason); });
    if (!spawned) ws->Abort();
  }

  asio::awaitable<void> Ended(std::shared_ptr<Conn> conn) {
    bool was_registered = false;
    bool replaced = false;
    std::string self_id;
    {
      std::lock_guard c(conn->mu);
      conn->ended = true;
      was_registered = conn->registered;
      replaced = conn->replaced;
      self_id = conn->self_id;
      conn->outbox.clear();
    }
    WakeWriter(*conn);
    std::vector<Pending> orphans;
    bool stopping = false;
    bool any_sender_left = false;
    {
      std::lock_guard lock(mu_);
      stopping = stopping_;
      any_sender_left = registry_.Remove(conn);
      orphans = pending_.TakeFor(conn->serial);
    }
    for (Pending& p : orphans) {
      if (p.lookup) p.lookup(nullptr);
      if (p.done) {
        (*p.done)(util::Fail(ErrorCode::kUpstreamUnreachable,
                             "the OneBot connection closed before the answer to " + p.action));
      }
    }
    if (stopping) co_return;
    const net::WebSocketClose how = conn->ws->close_info();
    host_.Log(LogLevel::kInfo,
              fmt::format("the OneBot connection from {} ({}) closed: {} {}", conn->remote,
                          self_id.empty() ? "?" : self_id, how.code, how.reason.substr(0, 100)));
    if (was_registered && !replaced && conn->CanSend() && !any_sender_left) {
      host_.OnTrouble(
          fmt::format("the OneBot implementation {} disconnected ({}); waiting for it to reconnect",
                      self_id.empty() ? conn->remote : self_id, how.code));
    }
  }

  // ---- answers and deadlines ------------------------------------------------------------

  void Answered(ActionResponse response) {
    std::optional<Pending> p;
    {
      std::lock_guard lock(mu_);
      p = pending_.Take(response.echo);
    }
    if (!p) return;  // late (timed out) or not ours
    if (p->lookup) return p->lookup(&response);
    if (!p->done) {
      auto conn = p->login_for.lock();
      if (!conn) return;
      if (response.ok && !response.user_id.empty()) {
        AdoptSelfId(conn, response.user_id);
      } else {
        host_.Log(LogLevel::kWarning,
                  fmt::format("get_login_info failed on the connection from {}: {}", conn->remote,
                              response.failure.empty() ? std::to_string(response.retcode)
                                                       : response.failure));
      }
      return;
    }
    (*p->done)(SendOutcome(*p, response));
  }

  void FailPending(const std::string& echo, util::Error error) {
    std::optional<Pending> p;
    {
      std::lock_guard lock(mu_);
      p = pending_.Take(echo);
    }
    if (p && p->done) (*p->done)(tl::unexpected(std::move(error)));
  }

  void ScheduleTick() {
    std::weak_ptr<Core> weak = weak_from_this();
    auto timer = clock_.After(kTick, [weak] {
      auto self = weak.lock();
      if (!self) return;
      // Re-armed here, not at the end of Tick: the ticks then follow the clock (a simulated one
      // too), however late the spawned Tick runs.
      self->ScheduleTick();
      self->group_->Spawn([self]() -> asio::awaitable<void> {
        self->Tick();
        co_return;
      });
    });
    std::lock_guard lock(mu_);
    if (stopping_) {
      timer.Cancel();
      return;
    }
    tick_timer_ = timer;
  }

  void Tick() {
    const util::TimePoint now = clock_.Now();
    std::vector<Pending> expired;
    std::vector<std::shared_ptr<Conn>> silent;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      expired = pending_.TakeExpired(now);
      silent = registry_.Silent(Millis(now));
    }
    for (Pending& p : expired) {
      if (p.lookup) {
        p.lookup(nullptr);
        continue;
      }
      const std::string why = fmt::format("OneBot did not answer {} within {} s", p.action,
                                          kActionTimeout.count() / 1000);
      if (p.done)
        (*p.done)(util::Fail(ErrorCode::kUpstreamTimeout, why));
      else
        host_.Log(LogLevel::kWarning, why);
    }
    for (auto& conn : silent) {
      const std::string self_id = conn->SelfId();
      host_.OnTrouble(
          fmt::format("no heartbeat from OneBot {} for over {} s; dropped the "
                      "connection and waiting for it to reconnect",
                      self_id.empty() ? conn->remote : self_id,
                      conn->heartbeat_ms.load() * kHeartbeatsMissed / 1000));
      if (!conn->dropping.exchange(true)) conn->ws->Abort();
    }
  }

  const AdapterContext context_;
  AdapterHost& host_;
  const util::Clock& clock_;
  std::string listen_host_;
  const std::int64_t port_;
  const std::string token_;
  const std::shared_ptr<CoroutineGroup> group_;
  std::atomic<std::uint64_t> serial_{0};
  std::atomic<bool> had_trouble_{false};
  util::TimerHandle retry_timer_;
  util::TimerHandle tick_timer_;

  std::mutex mu_;
  bool stopping_ = false;                             // guarded by mu_
  std::shared_ptr<net::WebSocketListener> listener_;  // guarded by mu_
  common::ReconnectBackoff backoff_;                  // guarded by mu_
  ConnectionRegistry registry_;                       // guarded by mu_
  PendingActions pending_;                            // guarded by mu_
  std::uint64_t refused_ = 0;                         // guarded by mu_
  std::uint64_t bad_frames_total_ = 0;                // guarded by mu_
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeOneBotAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, onebot::CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::onebot
