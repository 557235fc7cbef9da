// What every adapter Core repeated, made once: the context, the coroutine group its work runs in,
// Start's checks before its work starts, the stopping flag, Stop/Abandon (close the group once),
// Log/Trouble through the adapter's scrubber (no secret in a log line), a send coroutine spawned
// or its `done` failed with kCancelled when the bot is stopping, and the clock's pause and
// reconnect backoff. A Core derives from it and keeps only what is its platform's:
//   class Core : public common::AdapterCore<Core> {
//    public:
//     explicit Core(AdapterContext context) : AdapterCore(std::move(context)), rest_(context_) {}
//     void Start() {
//       StartIfMet({{!token_.empty(), "no token configured"}},
//                  [self = shared_from_this()] { return self->Run(); });
//     }
//     void Send(message, reply_to, done) {
//       auto once = common::MakeSendOnce(std::move(done));
//       SpawnSend(once, [self = shared_from_this(), once] { return self->rest_.Send(once); });
//     }
//    private:
//     std::string Scrub(std::string text) const override { return rest_.Scrub(std::move(text)); }
//   };
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "platforms/adapter_context.hpp"
#include "platforms/common/clock_waits.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::common {

template <class Derived>
class AdapterCore : public std::enable_shared_from_this<Derived> {
 public:
  AdapterCore(const AdapterCore&) = delete;
  AdapterCore& operator=(const AdapterCore&) = delete;
  virtual ~AdapterCore() = default;

  // PlatformAdapter::Stop: cancels every coroutine; `stopped` runs once none is left. A second
  // call (or one after Abandon) does nothing.
  void Stop(std::function<void()> stopped) {
    if (stopping_.exchange(true)) return;
    OnStopping();
    group_->Close(std::move(stopped));
  }

  // The adapter was destroyed: the same, with nobody waiting.
  void Abandon() {
    if (stopping_.exchange(true)) return;
    OnStopping();
    group_->Close(nullptr);
  }

 protected:
  explicit AdapterCore(AdapterContext context)
      : context_(std::move(context)), group_(CoroutineGroup::Make(context_.executor)) {}

  // Hides the adapter's secrets in a text bound for a log line or the bot's status.
  virtual std::string Scrub(std::string text) const { return text; }
  // Runs once, when Stop or Abandon is first called, before the group is closed.
  virtual void OnStopping() {}

  bool stopping() const { return stopping_; }

  // A condition Start needs (a configured credential, a well-formed URL, a transport), and the
  // bot's trouble when it does not hold.
  struct Requirement {
    bool met;
    std::string_view trouble;
  };

  // PlatformAdapter::Start's common shape: the first requirement not met is reported and nothing
  // starts; when all are met, `work` (the sign-in or the connection loop) starts in the group.
  void StartIfMet(std::initializer_list<Requirement> requirements,
                  std::function<boost::asio::awaitable<void>()> work) {
    for (const Requirement& requirement : requirements) {
      if (!requirement.met) {
        context_.host->OnTrouble(std::string(requirement.trouble));
        return;
      }
    }
    group_->Spawn(std::move(work));
  }

  void Log(domain::LogLevel level, std::string text) {
    context_.host->Log(level, Scrub(std::move(text)));
  }
  void Trouble(const std::string& why) { context_.host->OnTrouble(Scrub(why)); }

  // Starts `work` (a send coroutine that settles `once`) unless the bot is stopping; otherwise,
  // or when the group is already closed, `once` gets kCancelled.
  void SpawnSend(const std::shared_ptr<SendOnce>& once,
                 std::function<boost::asio::awaitable<void>()> work) {
    const bool started = !stopping_ && group_->Spawn(std::move(work));
    if (!started) (*once)(util::Fail(util::ErrorCode::kCancelled, "the bot is stopping"));
  }

  // Waits `delay` on the injected clock. False when cancelled.
  boost::asio::awaitable<bool> Pause(util::Duration delay) { return Sleep(*context_.clock, delay); }

  // Reports `why` with the retry to come, then waits for it. False when cancelled.
  boost::asio::awaitable<bool> Backoff(ReconnectBackoff& backoff, const std::string& why) {
    const util::Duration delay = backoff.NextDelay(context_.clock->Now());
    Trouble(fmt::format("{}; {}", why, backoff.Describe(delay)));
    co_return co_await Pause(delay);
  }

  const AdapterContext context_;
  const std::shared_ptr<CoroutineGroup> group_;

 private:
  std::atomic<bool> stopping_{false};
};

}  // namespace sb::platforms::common
