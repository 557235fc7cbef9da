// The aiocqhttp adapter: listens for OneBot v11 reverse WebSocket connections, reads each one
// (frames decoded by onebot_codec), routes sends to the right account and answers them by echo.
// The parts of its state live apart: onebot_connection (one socket and its writer),
// onebot_registry (slots, routes, liveness), onebot_pending (actions waiting for an answer),
// and onebot_upgrade judges each upgrade request. Core (onebot_core.hpp) is shared with
// onebot_actions.cpp, which holds sends, quote lookups, answers and deadlines.
#include "platforms/onebot/onebot_adapter.hpp"

#include <fmt/format.h>

#include "platforms/onebot/onebot_core.hpp"

namespace sb::platforms::onebot {
namespace detail {
namespace {

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

}  // namespace

void Core::Start() {
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

void Core::Stop(std::function<void()> stopped) {
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

void Core::Listen() {
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

void Core::Refused(const net::WebSocketUpgrade& up, const UpgradeCheck& check) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    ++refused_;
    if (refused_ > 20 && refused_ % 100 != 0) return;  // a reconnecting client retries forever
  }
  host_.Log(LogLevel::kWarning, fmt::format("refused a OneBot connection from {} ({}): {}",
                                            up.remote_address, check.status, check.body));
}

void Core::Opened(std::shared_ptr<net::WebSocketConnection> ws, net::WebSocketUpgrade up) {
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

asio::awaitable<void> Core::Serve(std::shared_ptr<Conn> conn) {
  co_await asio::this_coro::throw_if_cancelled(false);
  {
    std::lock_guard lock(mu_);
    registry_.AddLive(conn);
  }
  const std::string self_id = conn->SelfId();
  host_.Log(LogLevel::kInfo,
            fmt::format("OneBot implementation connected from {} (X-Self-ID {}, role {})",
                        conn->remote, self_id.empty() ? "absent" : self_id, RoleName(conn->role)));
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

void Core::HandleFrame(const std::shared_ptr<Conn>& conn, const std::string& data, bool binary) {
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

void Core::BadFrame(Conn& conn, const std::string& why) {
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
    host_.Log(LogLevel::kWarning, fmt::format("skipped a bad OneBot frame from {} ({} so far): {}",
                                              conn.remote, total, why.substr(0, 200)));
  }
  if (conn.bad_frames == kMaxBadFrames + 1) {
    host_.Log(
        LogLevel::kError,
        fmt::format("closed the OneBot connection from {}: over {} bad frames in {} s", conn.remote,
                    kMaxBadFrames,
                    std::chrono::duration_cast<std::chrono::seconds>(kBadFrameWindow).count()));
    Drop(conn, 1008, "too many malformed frames");
  }
}

void Core::AdoptSelfId(const std::shared_ptr<Conn>& conn, const std::string& self_id) {
  {
    std::lock_guard lock(conn->mu);
    if (!conn->self_id.empty()) return;
    conn->self_id = self_id;
  }
  Register(conn);
}

std::string Core::RememberRoute(const domain::ReceivedMessage& message,
                                const std::string& self_id) {
  std::lock_guard lock(mu_);
  return registry_.RememberRoute(message, self_id);
}

void Core::Register(const std::shared_ptr<Conn>& conn) {
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

void Core::Drop(Conn& conn, int code, std::string reason) {
  if (conn.dropping.exchange(true)) return;
  auto ws = conn.ws;
  const bool spawned = group_->Spawn(
      [ws, code, reason]() -> asio::awaitable<void> { co_await ws->Close(code, reason); });
  if (!spawned) ws->Abort();
}

asio::awaitable<void> Core::Ended(std::shared_ptr<Conn> conn) {
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

}  // namespace detail

std::unique_ptr<PlatformAdapter> MakeOneBotAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<detail::Core, onebot::CheckDeliverable>>(
      std::move(context));
}

}  // namespace sb::platforms::onebot
