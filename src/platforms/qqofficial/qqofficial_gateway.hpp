// The QQ gateway (WebSocket mode): GET /gateway, connect, HELLO, IDENTIFY with the app access
// token (or RESUME with the session and the last seq), heartbeats with the last seq, op 7
// reconnect, op 9 invalid session, and reconnects with backoff. Dispatches are handed to the
// adapter. Internal to platforms/qqofficial; modelled on the Discord adapter's gateway loop.
//   QqGateway gateway(context, rest, {.dispatch = ..., .ready = ..., .resumed = ...});
//   group->Spawn([&] { return gateway.Run(); });   // until the coroutine is cancelled
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <string>

#include "platforms/adapter_context.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/reconnect_loop.hpp"
#include "platforms/qqofficial/qqofficial_codec.hpp"
#include "platforms/qqofficial/qqofficial_rest.hpp"

namespace sb::platforms::qqofficial {

// Called on the gateway's coroutine; they must not block.
struct GatewayEvents {
  std::function<void(const Payload&)> dispatch;  // op 0 other than READY / RESUMED
  std::function<void(const ReadyInfo&)> ready;   // a new session
  std::function<void()> resumed;                 // an old session resumed
};

class QqGateway {
 public:
  // `context` and `rest` outlive this object.
  QqGateway(const AdapterContext& context, QqRest& rest, GatewayEvents events);

  // Keeps a session up until the awaiting coroutine is cancelled (then closes with 1000) or QQ
  // refuses the bot for good (reported with OnTrouble, then waits for the cancellation).
  boost::asio::awaitable<void> Run();

 private:
  struct Session;
  struct Link;
  struct Ended;
  // One pass of Run: a token, the gateway URL, a connection run until it ends.
  boost::asio::awaitable<common::Attempt> Connect(common::ReconnectBackoff& backoff,
                                                  Session& session, bool& renew_token);
  boost::asio::awaitable<Ended> RunConnection(Link& link, Session& session,
                                              const std::string& token);
  boost::asio::awaitable<Ended> ReadLoop(Link& link, Session& session);
  boost::asio::awaitable<Ended> HeartbeatLoop(Link& link, Session& session,
                                              std::chrono::milliseconds interval);
  Ended ReadFailed(const util::Error& error, const Link& link);
  void Log(domain::LogLevel level, std::string text);
  void Trouble(const std::string& why);
  void Complain(Link& link, std::string text);

  const AdapterContext& context_;
  QqRest& rest_;
  const GatewayEvents events_;
};

}  // namespace sb::platforms::qqofficial
