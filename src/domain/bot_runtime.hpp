// The port through which services reach running bots. The runtime that implements it starts one
// RuntimeBot per enabled bot; until one is wired in, services treat every bot as stopped.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "domain/bot.hpp"
#include "domain/message.hpp"
#include "domain/platform_call.hpp"
#include "domain/platform_socket.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::domain {

enum class RuntimeState { kStopped, kStarting, kRunning, kError };

const char* RuntimeStateName(RuntimeState state);

struct RuntimeStatus {
  RuntimeState state = RuntimeState::kStopped;
  std::string error;  // why, when kError
  util::TimePoint since;
  std::string bot_account_id;  // once the platform told us
};

struct SendReceipt {
  std::optional<std::string> message_id;
};

// Thread-safe.
class BotRuntime {
 public:
  virtual ~BotRuntime() = default;
  // nullopt when the runtime has never seen the bot.
  virtual std::optional<RuntimeStatus> Status(const util::BotId& id) = 0;
  // Starts, restarts or stops the bot to match `bot` (restarting only when adapter, config,
  // enable or pipeline changed). Returns at once; progress shows in Status and the bot log.
  virtual void Apply(const Bot& bot) = 0;
  virtual void Remove(const util::BotId& id) = 0;
  // Stores the log entries still queued, so that a read that follows sees them. Blocking.
  virtual void CommitLogs() = 0;
  // Delivers through the bot's adapter; `done` runs exactly once, on any thread, with kConflict
  // when the bot is not running, kInvalidArgument naming an element the adapter cannot deliver,
  // kUpstreamFailed / kUpstreamTimeout when the platform refused or did not answer. Never blocks.
  virtual void Send(const util::BotId& id, const OutgoingMessage& message,
                    std::function<void(util::Result<SendReceipt>)> done) = 0;
  // A platform's call to the bot's webhook URL, answered by the bot's adapter (which checks the
  // platform's signature first and chooses the answer its platform expects). Without a running
  // adapter: kConflict, or kUnavailable while the bot restarts (the platform retries). `answer`
  // runs exactly once, on any thread. Never blocks.
  virtual void HandlePlatformCall(const util::BotId& id, PlatformCall call,
                                  std::function<void(util::Result<PlatformAnswer>)> answer) = 0;
  // A WebSocket upgrade on the bot's URL (`call` is the upgrade request), handed to the bot's
  // adapter with our side of the connection: the handlers for what arrives, or why the upgrade is
  // refused (kConflict / kUnavailable as for HandlePlatformCall, the adapter's own refusals). May
  // block briefly (called on the blocking pool).
  virtual util::Result<PlatformSocketHandlers> OpenPlatformSocket(
      const util::BotId& id, PlatformCall call, std::shared_ptr<PlatformSocket> socket) {
    (void)id;
    (void)call;
    (void)socket;
    return util::Fail(util::ErrorCode::kNotFound, "this server takes no WebSocket on bot URLs");
  }
};

}  // namespace sb::domain
