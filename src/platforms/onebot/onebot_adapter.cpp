#include "platforms/onebot/onebot_adapter.hpp"

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/websocket.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/onebot/onebot_codec.hpp"
#include "util/call_once.hpp"

namespace sb::platforms::onebot {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using domain::LogLevel;
using util::ErrorCode;

// An action the implementation has not answered within this long fails with kUpstreamTimeout
// (aiocqhttp waits 60 s; a reply that late is of no use to a chat).
constexpr util::Duration kActionTimeout = 30s;
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
// Missing heartbeats for this many intervals (plus a little slack) means a dead link.
constexpr int kHeartbeatsMissed = 2;
constexpr util::Duration kHeartbeatSlack = 1s;
constexpr std::size_t kMaxConnections = 2048;
constexpr std::size_t kMaxRoutes = 100'000;  // chats remembered with the account that heard them

using SendDone = std::function<void(util::Result<domain::SendReceipt>)>;

class OnceDone : public util::CallOnce<util::Result<domain::SendReceipt>> {
 public:
  explicit OnceDone(SendDone done)
      : CallOnce(std::move(done), [] {
          return util::Fail(ErrorCode::kCancelled, "the bot stopped before sending");
        }) {}
};

const char* RoleName(ClientRole role) {
  switch (role) {
    case ClientRole::kApi:
      return "API";
    case ClientRole::kEvent:
      return "Event";
    case ClientRole::kUniversal:
      break;
  }
  return "Universal";
}

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

// One accepted socket and what the adapter knows about it.
struct Conn {
  std::uint64_t serial = 0;
  std::shared_ptr<net::WebSocketConnection> ws;
  ClientRole role = ClientRole::kUniversal;
  std::string remote;

  std::mutex mu;
  std::string self_id;             // guarded by mu; empty until known
  bool registered = false;         // guarded by mu; holds its slot in Core::slots_
  bool replaced = false;           // guarded by mu; a newer connection took its slot
  bool ended = false;              // guarded by mu; the read loop has finished
  std::deque<std::string> outbox;  // guarded by mu; frames for the writer, in order
  bool writer_idle = false;        // guarded by mu; the writer waits on `wake`
  std::optional<asio::any_io_executor> writer_executor;  // guarded by mu; the writer's strand
  std::shared_ptr<asio::steady_timer> wake;              // guarded by mu; the writer's wait

  std::atomic<std::int64_t> last_frame_ms{0};
  std::atomic<std::int64_t> heartbeat_ms{0};  // 0 until a heartbeat says its interval
  std::atomic<bool> dropping{false};          // a close or abort is under way
  // Bad frames in the current window; touched by the read loop only.
  int bad_frames = 0;
  std::int64_t bad_window_start_ms = 0;

  bool CanSend() const { return role != ClientRole::kEvent; }
  std::string SelfId() {
    std::lock_guard lock(mu);
    return self_id;
  }
};

struct Pending {
  std::shared_ptr<OnceDone> done;  // a send; null for the get_login_info of `login_for`
  std::weak_ptr<Conn> login_for;
  std::uint64_t conn_serial = 0;
  std::string action;
  util::TimePoint deadline;
};

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
      for (auto& [echo, p] : pending_) pending.push_back(std::move(p));
      pending_.clear();
      slots_.clear();
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
    auto once = std::make_shared<OnceDone>(std::move(done));
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
      conn = RouteFor(message);
      if (!conn) {
        (*once)(util::Fail(ErrorCode::kUpstreamUnreachable,
                           "no OneBot implementation is connected to this bot"));
        return;
      }
      echo = NextEcho();
      pending_.emplace(
          echo, Pending{once, {}, conn->serial, action->action, clock_.Now() + kActionTimeout});
    }
    if (!Enqueue(*conn, EncodeActionFrame(*action, echo))) {
      FailPending(echo, {ErrorCode::kUpstreamUnreachable,
                         "the OneBot connection closed before the message went out"});
    }
  }

 private:
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
                         group_->Spawn([self, conn]() { return self->Writer(conn); });
    if (!started) conn->ws->Abort();
  }

  // ---- one connection -------------------------------------------------------------------

  asio::awaitable<void> Serve(std::shared_ptr<Conn> conn) {
    co_await asio::this_coro::throw_if_cancelled(false);
    {
      std::lock_guard lock(mu_);
      live_.emplace(conn->serial, conn);
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
        echo = NextEcho();
        pending_.emplace(echo, Pending{nullptr, conn, conn->serial, "get_login_info",
                                       clock_.Now() + kActionTimeout});
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
        host_.OnMessage(std::move(*frame->message));
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

  static std::string RouteKey(domain::TargetType type, const std::string& id) {
    return (type == domain::TargetType::kGroup ? "g" : "p") + id;
  }

  // Replies leave through the account that received the chat (a bot may serve several QQ
  // accounts, and only members of a group can write to it).
  // Returns the account id the host currently knows the bot by.
  std::string RememberRoute(const domain::ReceivedMessage& message, const std::string& self_id) {
    if (self_id.empty()) return self_id;
    std::string key = RouteKey(message.chat_type, message.chat_id);
    std::lock_guard lock(mu_);
    auto it = routes_.find(key);
    if (it != routes_.end()) {
      if (it->second != self_id) it->second = self_id;
    } else {
      if (routes_.size() >= kMaxRoutes) routes_.clear();
      routes_.emplace(std::move(key), self_id);
    }
    return shown_account_.empty() ? self_id : shown_account_;
  }

  // The connection a message to `message`'s target goes through: the account that last heard
  // from that chat when it is connected, else the newest connection that takes actions. mu_ held.
  std::shared_ptr<Conn> RouteFor(const domain::OutgoingMessage& message) {
    if (slots_.size() > 1) {
      auto route = routes_.find(RouteKey(message.target_type, message.target_id));
      if (route != routes_.end()) {
        auto slot = slots_.find(route->second + "/api");
        if (slot != slots_.end()) return slot->second;
      }
    }
    return primary_.lock();
  }

  // The connection holds the slot of its account and role: an older one there is closed.
  void Register(const std::shared_ptr<Conn>& conn) {
    const std::string self_id = conn->SelfId();
    const std::string key = self_id + (conn->CanSend() ? "/api" : "/event");
    std::shared_ptr<Conn> older;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      {
        std::lock_guard c(conn->mu);
        if (conn->ended) return;
        conn->registered = true;
      }
      auto& slot = slots_[key];
      if (slot && slot != conn) older = slot;
      slot = conn;
      if (conn->CanSend()) primary_ = conn;
      shown_account_ = self_id;
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
      live_.erase(conn->serial);
      for (auto it = slots_.begin(); it != slots_.end();) {
        if (it->second == conn) {
          it = slots_.erase(it);
        } else {
          ++it;
        }
      }
      if (primary_.lock() == conn || primary_.expired()) {
        primary_.reset();
        for (auto& [key, other] : slots_) {
          if (other->CanSend()) primary_ = other;
        }
      }
      any_sender_left = !primary_.expired();
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->second.conn_serial == conn->serial) {
          orphans.push_back(std::move(it->second));
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (Pending& p : orphans) {
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

  // ---- writing --------------------------------------------------------------------------

  // False when the connection has ended: the frame will not go out.
  bool Enqueue(Conn& conn, std::string frame) {
    {
      std::lock_guard lock(conn.mu);
      if (conn.ended) return false;
      conn.outbox.push_back(std::move(frame));
    }
    WakeWriter(conn);
    return true;
  }

  void WakeWriter(Conn& conn) {
    std::shared_ptr<asio::steady_timer> timer;
    std::optional<asio::any_io_executor> executor;
    {
      std::lock_guard lock(conn.mu);
      if (!conn.writer_idle || !conn.wake) return;
      conn.writer_idle = false;
      timer = conn.wake;
      executor = conn.writer_executor;
    }
    // The writer set writer_idle and began its wait in one step on its strand, so this cancel,
    // queued on that strand, reaches the wait.
    asio::post(*executor, [timer] { timer->cancel(); });
  }

  asio::awaitable<void> Writer(std::shared_ptr<Conn> conn) {
    co_await asio::this_coro::throw_if_cancelled(false);
    auto executor = co_await asio::this_coro::executor;
    auto wake = std::make_shared<asio::steady_timer>(executor);
    {
      std::lock_guard lock(conn->mu);
      conn->writer_executor = executor;
      conn->wake = wake;
    }
    std::deque<std::string> batch;
    for (;;) {
      {
        std::lock_guard lock(conn->mu);
        if (conn->outbox.empty()) {
          if (conn->ended) break;
          conn->writer_idle = true;
        } else {
          batch.swap(conn->outbox);
        }
      }
      if (batch.empty()) {
        wake->expires_at(asio::steady_timer::time_point::max());
        (void)co_await wake->async_wait(asio::as_tuple(asio::use_awaitable));
        auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none) break;
        continue;
      }
      for (std::string& frame : batch) {
        auto written = co_await conn->ws->Write(std::move(frame));
        if (!written) {
          batch.clear();
          // The read loop sees the same end and fails what waits for an answer.
          conn->ws->Abort();
          break;
        }
      }
      batch.clear();
    }
    std::lock_guard lock(conn->mu);
    conn->writer_idle = false;
    conn->wake.reset();
  }

  // ---- answers and deadlines ------------------------------------------------------------

  std::string NextEcho() { return "sb:" + std::to_string(++echo_seq_); }  // mu_ held

  void Answered(ActionResponse response) {
    std::optional<Pending> p;
    {
      std::lock_guard lock(mu_);
      auto it = pending_.find(response.echo);
      if (it == pending_.end()) return;  // late (timed out) or not ours
      p = std::move(it->second);
      pending_.erase(it);
    }
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
    if (!response.ok) {
      std::string why = response.failure.empty() ? "no reason given" : response.failure;
      (*p->done)(util::Fail(
          ErrorCode::kUpstreamFailed,
          fmt::format("OneBot refused {}: {} (retcode {})", p->action, why, response.retcode)));
      return;
    }
    domain::SendReceipt receipt;
    if (!response.message_id.empty()) receipt.message_id = response.message_id;
    (*p->done)(receipt);
  }

  void FailPending(const std::string& echo, util::Error error) {
    std::optional<Pending> p;
    {
      std::lock_guard lock(mu_);
      auto it = pending_.find(echo);
      if (it == pending_.end()) return;
      p = std::move(it->second);
      pending_.erase(it);
    }
    if (p->done) (*p->done)(tl::unexpected(std::move(error)));
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
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->second.deadline <= now) {
          expired.push_back(std::move(it->second));
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
      const std::int64_t now_ms = Millis(now);
      for (auto& [serial, conn] : live_) {
        const std::int64_t interval = conn->heartbeat_ms.load();
        if (interval <= 0 || conn->dropping.load()) continue;
        const std::int64_t allowed = interval * kHeartbeatsMissed + kHeartbeatSlack.count();
        if (now_ms - conn->last_frame_ms.load() > allowed) silent.push_back(conn);
      }
    }
    for (Pending& p : expired) {
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
  bool stopping_ = false;                                // guarded by mu_
  std::shared_ptr<net::WebSocketListener> listener_;     // guarded by mu_
  common::ReconnectBackoff backoff_;                     // guarded by mu_
  std::map<std::uint64_t, std::shared_ptr<Conn>> live_;  // guarded by mu_; by serial
  std::map<std::string, std::shared_ptr<Conn>> slots_;   // guarded by mu_; "<self>/api|event"
  std::weak_ptr<Conn> primary_;                          // guarded by mu_; where sends go
  std::unordered_map<std::string, std::string> routes_;  // guarded by mu_; chat -> self id
  std::string shown_account_;  // guarded by mu_; the account id last given to OnConnected
  std::unordered_map<std::string, Pending> pending_;  // guarded by mu_; by echo
  std::uint64_t echo_seq_ = 0;                        // guarded by mu_
  std::uint64_t refused_ = 0;                         // guarded by mu_
  std::uint64_t bad_frames_total_ = 0;                // guarded by mu_
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeOneBotAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, onebot::CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::onebot
