// A WebSocket connection a platform's client opened to a bot's route (`/bots/{uuid}/...`), as the
// bot's adapter sees it: plain callbacks, no Asio or Beast. The HTTP layer accepts the upgrade and
// hands our side of the connection through the bot runtime to the adapter, which answers with the
// handlers for what arrives (the web page bot's visitor sockets).
//   auto handlers = runtime.OpenPlatformSocket(bot_id, call, socket);  // error: HTTP refusal
//   socket->SendText(R"({"type":"message"})");
//   socket->Close(1008, "too many messages");
#pragma once

#include <functional>
#include <string>

namespace sb::domain {

// Our side of the connection. Thread-safe; never blocks; every call after the connection closed
// is ignored.
class PlatformSocket {
 public:
  virtual ~PlatformSocket() = default;
  // Queues a text frame; frames go out in order.
  virtual void SendText(std::string text) = 0;
  // Starts a close with `code` (RFC 6455 §7.4: 1000 normal, 1008 policy, 1009 too big, ...) once
  // the queued frames are out; on_close follows. Idempotent.
  virtual void Close(int code, std::string reason) = 0;
};

// Both may block (they run on the blocking pool); either may be empty.
struct PlatformSocketHandlers {
  std::function<void(std::string text)> on_text = {};  // each text frame, in order, one at a time
  std::function<void()> on_close = {};                 // exactly once, when the connection is gone
};

}  // namespace sb::domain
