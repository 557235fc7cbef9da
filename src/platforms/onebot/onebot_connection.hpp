// One accepted OneBot reverse WebSocket and its writer: what the adapter knows about the socket
// (account, role, liveness, bad frames) and an outbox that one coroutine per connection writes in
// order, so that any thread can queue a frame without waiting for the socket.
//   auto conn = std::make_shared<Conn>();  conn->ws = std::move(ws);
//   group->Spawn([conn] { return RunWriter(conn); });
//   if (!Enqueue(*conn, frame)) { /* the connection has ended; the frame will not go out */ }
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "net/websocket.hpp"
#include "platforms/onebot/onebot_upgrade.hpp"

namespace sb::platforms::onebot {

struct Conn {
  std::uint64_t serial = 0;
  std::shared_ptr<net::WebSocketConnection> ws;
  ClientRole role = ClientRole::kUniversal;
  std::string remote;

  std::mutex mu;
  std::string self_id;             // guarded by mu; empty until known
  bool registered = false;         // guarded by mu; holds its slot in the ConnectionRegistry
  bool replaced = false;           // guarded by mu; a newer connection took its slot
  bool ended = false;              // guarded by mu; the read loop has finished
  std::deque<std::string> outbox;  // guarded by mu; frames for the writer, in order
  bool writer_idle = false;        // guarded by mu; the writer waits on `wake`
  std::optional<boost::asio::any_io_executor> writer_executor;  // guarded by mu; writer's strand
  std::shared_ptr<boost::asio::steady_timer> wake;              // guarded by mu; writer's wait

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

// Queues `frame` for the writer. False when the connection has ended: the frame will not go out.
// Thread-safe.
bool Enqueue(Conn& conn, std::string frame);

// Wakes an idle writer (to write, or to see that the connection ended). Thread-safe.
void WakeWriter(Conn& conn);

// Writes the outbox in order until the connection ends or the coroutine is cancelled; a failed
// write aborts the socket, so the read loop sees the end. One per connection.
boost::asio::awaitable<void> RunWriter(std::shared_ptr<Conn> conn);

}  // namespace sb::platforms::onebot
