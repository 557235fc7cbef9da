// The inside of BotRuntimeManager, shared by its two source files: the manager's state (Impl)
// and one start of a bot (Incarnation) in bot_runtime_manager.cpp, a message's way through the
// driver (BotOrigin, BotTurn) in bot_turn.cpp. Not for use outside src/runtime.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "domain/message_takeover.hpp"
#include "domain/message_text.hpp"
#include "pipeline/message_driver.hpp"
#include "runtime/bot_log_writer.hpp"
#include "runtime/bot_runtime_manager.hpp"
#include "runtime/message_monitor.hpp"

namespace sb::runtime {

using domain::LogLevel;
using domain::RuntimeState;
using domain::RuntimeStatus;

inline constexpr std::size_t kMaxLogTextBytes = 4000;

class Incarnation;

struct BotRuntimeManager::Impl : std::enable_shared_from_this<Impl> {
  Impl(RuntimeDeps d, RuntimeOptions o)
      : deps(std::move(d)),
        options(std::move(o)),
        log_writer(*deps.logs, *deps.blocking),
        monitor(deps.monitoring, deps.metrics, deps.clock) {}

  struct Entry {
    std::shared_ptr<Incarnation> current;
    RuntimeStatus status;
    // Earlier incarnations still stopping: `current` starts only when this is back to zero, so
    // two adapters of one bot never run together (two pollers on one token would fight).
    int stopping = 0;
    bool removed = false;  // deleted; kept until its last incarnation has stopped
  };

  RuntimeDeps deps;
  RuntimeOptions options;
  BotLogWriter log_writer;
  MessageMonitor monitor;

  std::mutex mu;
  std::condition_variable stopped_cv;
  std::map<std::string, Entry> bots;                    // by bot uuid; guarded by mu
  std::set<std::shared_ptr<Incarnation>> stopping_all;  // Stop not finished; guarded by mu
  bool shut_down = false;                               // guarded by mu
  // Several instances: what says whether this one still holds a bot's lease. Null: it holds all.
  std::atomic<const domain::SendFence*> fence{nullptr};

  // kUnavailable once this instance has lost `bot`'s lease: it must send nothing more for it.
  util::Result<void> MaySend(const util::BotId& bot) const {
    const domain::SendFence* f = fence.load(std::memory_order_acquire);
    if (f == nullptr || f->MaySend(bot)) return util::Ok();
    return util::Fail(util::ErrorCode::kUnavailable,
                      "this instance no longer holds the lease of bot " + bot.str());
  }

  void Log(const util::BotId& bot, int retention, LogLevel level, std::string text,
           std::string session = {}, std::vector<std::string> images = {}) {
    domain::BotLogEntry entry;
    entry.timestamp = deps.clock->Now();
    entry.level = level;
    entry.text = domain::TruncateUtf8(std::move(text), kMaxLogTextBytes);
    entry.images = std::move(images);
    entry.message_session_id = std::move(session);
    log_writer.Append(bot, retention, std::move(entry));
  }

  int RetentionOf(const domain::Bot& bot) const {
    return bot.log_retention.value_or(options.default_log_retention);
  }

  void Apply(const domain::Bot& bot);
  void StopIncarnation(const std::shared_ptr<Incarnation>& inc, std::function<void()> then);
  void Retire(const std::string& key, std::shared_ptr<Incarnation> old);
  void Dispatch(const std::shared_ptr<Incarnation>& inc, domain::ReceivedMessage message);
  void SetConnected(const Incarnation& inc, std::string account_id);
  void SetTrouble(const Incarnation& inc, std::string why);
  // `inc` while it runs; once it is stopping (a restart), the bot's next incarnation of the same
  // adapter, so replies and held messages are not lost to the restart; null when there is none.
  std::shared_ptr<Incarnation> Live(const std::shared_ptr<Incarnation>& inc);
};

// One start of a bot: its adapter and what the adapter reports. A restart makes a new
// incarnation once the old one has stopped, so two adapters of one bot never run together.
class Incarnation final : public platforms::AdapterHost,
                          public std::enable_shared_from_this<Incarnation> {
 public:
  Incarnation(std::weak_ptr<BotRuntimeManager::Impl> impl, domain::Bot bot)
      : impl_(std::move(impl)), bot_(std::move(bot)), retention_(0) {}

  void Init(std::unique_ptr<platforms::PlatformAdapter> adapter, int retention) {
    adapter_ = std::move(adapter);
    retention_ = retention;
  }

  const domain::Bot& bot() const { return bot_; }
  std::shared_ptr<BotRuntimeManager::Impl> impl() const { return impl_.lock(); }
  platforms::PlatformAdapter& adapter() { return *adapter_; }
  int retention() const { return retention_.load(); }
  void set_retention(int retention) { retention_ = retention; }
  bool stop_requested() const { return stop_requested_.load(); }
  bool started() const {
    std::lock_guard lock(mu_);
    return started_;
  }

  std::string account_id() const {
    std::lock_guard lock(mu_);
    return account_id_;
  }

  void Start() {
    {
      std::lock_guard lock(mu_);
      if (stop_requested_ || started_) return;
      started_ = true;
    }
    adapter_->Start();
  }

  // `stopped` runs once the adapter has ended. A never-started adapter is stopped too: sends
  // made through it (replies re-routed during a restart) must end as well.
  void Stop(std::function<void()> stopped) {
    {
      std::lock_guard lock(mu_);
      if (stop_requested_.exchange(true)) return;
    }
    adapter_->Stop(std::move(stopped));
  }

  // AdapterHost
  void OnMessage(domain::ReceivedMessage message) override {
    auto impl = impl_.lock();
    if (impl && !stop_requested_) impl->Dispatch(shared_from_this(), std::move(message));
  }
  void OnConnected(std::string bot_account_id) override {
    {
      std::lock_guard lock(mu_);
      account_id_ = bot_account_id;
    }
    if (auto impl = impl_.lock()) impl->SetConnected(*this, std::move(bot_account_id));
  }
  void OnTrouble(std::string why) override {
    if (auto impl = impl_.lock()) impl->SetTrouble(*this, std::move(why));
  }
  void Log(LogLevel level, std::string text) override {
    if (auto impl = impl_.lock()) impl->Log(bot_.uuid, retention(), level, std::move(text));
  }
  bool MayAct() const override {
    auto impl = impl_.lock();
    return impl && impl->MaySend(bot_.uuid).has_value();
  }
  void OnFeedback(domain::ReceivedFeedback feedback) override {
    auto impl = impl_.lock();
    if (!impl || stop_requested_) return;
    const std::string session =
        pipeline::SessionId(pipeline::LauncherOf(feedback.chat_type), feedback.chat_id);
    impl->monitor.Feedback(bot_, feedback, session);
  }

 private:
  std::weak_ptr<BotRuntimeManager::Impl> impl_;
  const domain::Bot bot_;
  std::atomic<int> retention_;
  std::unique_ptr<platforms::PlatformAdapter> adapter_;
  mutable std::mutex mu_;
  bool started_ = false;  // guarded by mu_
  std::atomic<bool> stop_requested_{false};
  std::string account_id_;  // guarded by mu_
};

// The origin the driver gets for a message of `inc` (bot_turn.cpp).
std::shared_ptr<pipeline::MessageOrigin> MakeBotOrigin(std::weak_ptr<BotRuntimeManager::Impl> impl,
                                                       std::shared_ptr<Incarnation> inc,
                                                       std::shared_ptr<domain::Takeover> takeover);

}  // namespace sb::runtime
