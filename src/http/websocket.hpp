// WebSocket routes as handlers see them: the route's accept function gets our side of the
// connection and answers with callbacks for what arrives. No Asio or Beast here.
//   route.websocket = [](Request& req, std::shared_ptr<WebSocketPeer> peer) {
//     return util::Result<WebSocketHandlers>(WebSocketHandlers{
//         [peer](std::string text) { peer->SendText(text); }, [] {}});
//   };
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "http/request.hpp"
#include "util/error.hpp"

namespace sb::http {

// Our side of an accepted WebSocket connection. Thread-safe; never blocks.
class WebSocketPeer {
 public:
  virtual ~WebSocketPeer() = default;
  // Queues a text frame; frames go out in order. Ignored after the connection closed.
  virtual void SendText(std::string text) = 0;
  // Starts a normal close (code 1000) once the queued frames are out; on_close follows.
  // Idempotent.
  virtual void Close() = 0;
  // The same with a close code of RFC 6455 §7.4 (1008 policy, 1009 too big) and a short reason.
  virtual void CloseWith(int code, std::string reason) {
    (void)code;
    (void)reason;
    Close();
  }
};

// Both run on the blocking pool and may block; either may be empty.
struct WebSocketHandlers {
  std::function<void(std::string text)> on_text = {};  // each text message, in order, one at a time
  std::function<void()> on_close = {};                 // exactly once, when the connection is gone
};

// Called on the blocking pool after authentication, before the upgrade is answered: an error
// becomes an ordinary HTTP error response (the envelope, as for other routes) and no upgrade
// happens. The peer may be kept; frames sent before the upgrade completes are queued.
using WebSocketAccept =
    std::function<util::Result<WebSocketHandlers>(Request&, std::shared_ptr<WebSocketPeer>)>;

}  // namespace sb::http
