// One accepted WebSocket connection, after the HTTP session has read the upgrade request and the
// route has accepted it: reads text messages and hands them to the route on the blocking pool one
// at a time, writes queued frames in order, closes. Internal to the server (pulls in Beast).
//   auto session = WebSocketSession::Create(stream.get_executor(), blocking, request_id);
//   auto handlers = router.AcceptWebSocket(match, req, session->peer());   // on the pool
//   co_await session->Run(stream.release_socket(), std::move(upgrade), std::move(*handlers));
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "http/websocket.hpp"

namespace sb::http {

class WebSocketSession : public std::enable_shared_from_this<WebSocketSession> {
 public:
  static constexpr std::size_t kMaxMessageBytes = 1024 * 1024;

  // `strand` is the executor of the connection's socket; everything below runs on it.
  static std::shared_ptr<WebSocketSession> Create(boost::asio::any_io_executor strand,
                                                  boost::asio::thread_pool& blocking,
                                                  std::string request_id);
  // Calls on_close if Run was cut short (its frame destroyed with the io_context).
  ~WebSocketSession();
  WebSocketSession(const WebSocketSession&) = delete;
  WebSocketSession& operator=(const WebSocketSession&) = delete;

  // Our side as the route sees it. Holds the session weakly, so it may outlive it (and then
  // does nothing).
  std::shared_ptr<WebSocketPeer> peer() const { return peer_; }

  // On the strand: answers the upgrade, runs the connection until it is gone, then calls
  // on_close (on the blocking pool) and returns.
  boost::asio::awaitable<void> Run(
      boost::asio::ip::tcp::socket socket,
      boost::beast::http::request<boost::beast::http::string_body> upgrade,
      WebSocketHandlers handlers);

  // Thread-safe. Closes with 1001 (going away) once the queued frames are out; a client that
  // does not answer within kShutdownGrace is cut off. Before Run, applies when Run starts.
  void Shutdown();

  // Thread-safe; what the peer's methods do.
  void Send(std::string text);
  void RequestClose(boost::beast::websocket::close_reason reason);

 private:
  class Peer;
  static constexpr std::chrono::seconds kShutdownGrace{1};

  WebSocketSession(boost::asio::any_io_executor strand, boost::asio::thread_pool& blocking,
                   std::string request_id);
  // Starts the next write, or the close once the queue is empty.
  void Pump();
  void ArmCut();
  boost::asio::awaitable<void> Deliver(std::string text);
  boost::asio::awaitable<void> ReportClose();

  boost::asio::any_io_executor strand_;
  boost::asio::thread_pool& blocking_;
  const std::string request_id_;
  std::shared_ptr<WebSocketPeer> peer_;
  std::atomic<bool> close_reported_{false};

  // All below: only on strand_ (or from the blocking pool while Run awaits it).
  WebSocketHandlers handlers_;
  std::optional<boost::beast::websocket::stream<boost::beast::tcp_stream>> ws_;
  std::deque<std::string> queue_;  // the front is being written while writing_
  std::size_t queued_bytes_ = 0;   // of queue_
  static constexpr std::size_t kMaxQueuedBytes = 16 * 1024 * 1024;
  bool open_ = false;  // the handshake is done
  bool writing_ = false;
  bool finished_ = false;  // Run is past the read loop; nothing more goes out
  bool shutting_down_ = false;
  std::optional<boost::beast::websocket::close_reason> close_wanted_;
  bool close_started_ = false;
  bool close_done_ = false;
  boost::asio::steady_timer close_wait_;  // cancelled when the close operation completes
  boost::asio::steady_timer cut_timer_;   // after Shutdown: cuts a client that does not answer
};

}  // namespace sb::http
