#include "runtime/bot_runtime_manager.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "domain/message_text.hpp"
#include "pipeline/query.hpp"
#include "runtime/bot_log_writer.hpp"
#include "runtime/message_monitor.hpp"
#include "runtime/streamed_reply.hpp"

namespace sb::runtime {

using domain::LogLevel;
using domain::RuntimeState;
using domain::RuntimeStatus;
using util::ErrorCode;

namespace {

constexpr std::size_t kMaxLogTextBytes = 4000;

domain::MessageElement Plain(std::string text) {
  domain::MessageElement e;
  e.type = domain::ElementType::kPlain;
  e.text = std::move(text);
  return e;
}

bool SameRuntime(const domain::Bot& a, const domain::Bot& b) {
  return a.adapter == b.adapter && a.adapter_config == b.adapter_config && a.enable == b.enable &&
         a.use_pipeline_uuid == b.use_pipeline_uuid;
}

}  // namespace

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

void BotRuntimeManager::Impl::Apply(const domain::Bot& bot) {
  const std::string key = bot.uuid.str();
  std::shared_ptr<Incarnation> old;
  std::shared_ptr<Incarnation> next;
  std::string problem;
  bool start_now = false;
  {
    std::lock_guard lock(mu);
    if (shut_down) return;
    Entry& entry = bots[key];
    entry.removed = false;
    if (entry.current && SameRuntime(entry.current->bot(), bot)) {
      entry.current->set_retention(RetentionOf(bot));  // the one setting read while running
      return;
    }
    if (!entry.current && !bot.enable && entry.status.state == RuntimeState::kStopped) return;
    old = std::move(entry.current);
    entry.current = nullptr;
    entry.status = {RuntimeState::kStopped, "", deps.clock->Now(), ""};
    if (bot.enable) {
      auto factory = deps.adapters.find(bot.adapter);
      if (factory == deps.adapters.end()) {
        problem = fmt::format("the {} adapter cannot run yet in this version", bot.adapter);
        entry.status = {RuntimeState::kError, problem, deps.clock->Now(), ""};
      } else {
        next = std::make_shared<Incarnation>(weak_from_this(), bot);
        platforms::AdapterContext context;
        context.bot_uuid = key;
        context.config = bot.adapter_config;
        if (!options.webhook_prefix.empty()) {
          context.webhook_url = options.webhook_prefix + "/bots/" + key;
        }
        context.executor = deps.executor;
        context.http = deps.http;
        context.websockets = deps.websockets;
        context.clock = deps.clock;
        context.host = next.get();
        next->Init(factory->second(std::move(context)), RetentionOf(bot));
        entry.current = next;
        entry.status = {RuntimeState::kStarting, "", deps.clock->Now(), ""};
      }
    }
    if (old) ++entry.stopping;
    start_now = next && entry.stopping == 0;
  }
  const int retention = RetentionOf(bot);
  if (!problem.empty()) Log(bot.uuid, retention, LogLevel::kError, problem);
  if (next) {
    Log(bot.uuid, retention, LogLevel::kInfo,
        fmt::format("{} with the {} adapter", old ? "restarting" : "starting", bot.adapter));
  }
  if (old) Retire(key, std::move(old));
  // Read the pipeline now (Apply runs where it may block), so the first messages find it cached
  // and aggregation applies to them too. A failure shows on the first message instead.
  if (next) (void)deps.pipelines->Load(bot.use_pipeline_uuid);
  if (start_now) next->Start();
}

void BotRuntimeManager::Impl::Retire(const std::string& key, std::shared_ptr<Incarnation> old) {
  std::weak_ptr<Impl> weak = weak_from_this();
  StopIncarnation(old, [weak, key] {
    auto self = weak.lock();
    if (!self) return;
    std::shared_ptr<Incarnation> successor;
    {
      std::lock_guard lock(self->mu);
      auto it = self->bots.find(key);
      if (it == self->bots.end()) return;
      if (--it->second.stopping == 0) {
        successor = it->second.current;
        if (it->second.removed) self->bots.erase(it);
      }
    }
    if (successor) successor->Start();  // a no-op when it already started or was stopped
  });
}

void BotRuntimeManager::Impl::StopIncarnation(const std::shared_ptr<Incarnation>& inc,
                                              std::function<void()> then) {
  {
    std::lock_guard lock(mu);
    stopping_all.insert(inc);
  }
  std::weak_ptr<Impl> weak = weak_from_this();
  inc->Stop([weak, inc, then = std::move(then)] {
    if (auto self = weak.lock()) {
      self->Log(inc->bot().uuid, inc->retention(), LogLevel::kInfo, "stopped");
      {
        std::lock_guard lock(self->mu);
        self->stopping_all.erase(inc);
      }
      self->stopped_cv.notify_all();
    }
    if (then) then();
  });
}

void BotRuntimeManager::Impl::SetConnected(const Incarnation& inc, std::string account_id) {
  bool changed = false;
  {
    std::lock_guard lock(mu);
    auto it = bots.find(inc.bot().uuid.str());
    if (it == bots.end() || it->second.current.get() != &inc) return;
    RuntimeStatus& status = it->second.status;
    changed = status.state != RuntimeState::kRunning || status.bot_account_id != account_id;
    if (changed) status = {RuntimeState::kRunning, "", deps.clock->Now(), account_id};
  }
  if (changed) {
    Log(inc.bot().uuid, inc.retention(), LogLevel::kInfo,
        account_id.empty() ? std::string("running")
                           : fmt::format("running as account {}", account_id));
  }
}

void BotRuntimeManager::Impl::SetTrouble(const Incarnation& inc, std::string why) {
  bool changed = false;
  {
    std::lock_guard lock(mu);
    auto it = bots.find(inc.bot().uuid.str());
    if (it == bots.end() || it->second.current.get() != &inc) return;
    RuntimeStatus& status = it->second.status;
    // The same failure repeated at every retry is logged once.
    changed = status.state != RuntimeState::kError || status.error != why;
    if (changed) status = {RuntimeState::kError, why, deps.clock->Now(), status.bot_account_id};
  }
  if (changed) Log(inc.bot().uuid, inc.retention(), LogLevel::kError, why);
}

std::shared_ptr<Incarnation> BotRuntimeManager::Impl::Live(
    const std::shared_ptr<Incarnation>& inc) {
  if (!inc->stop_requested()) return inc;
  std::lock_guard lock(mu);
  auto it = bots.find(inc->bot().uuid.str());
  if (it == bots.end() || !it->second.current) return nullptr;
  const auto& next = it->second.current;
  if (next->stop_requested() || next->bot().adapter != inc->bot().adapter) return nullptr;
  return next;
}

// A running bot as the message driver sees it: where its messages come from and its replies go.
class BotOrigin final : public pipeline::MessageOrigin {
 public:
  BotOrigin(std::weak_ptr<BotRuntimeManager::Impl> impl, std::shared_ptr<Incarnation> inc,
            std::shared_ptr<domain::Takeover> takeover)
      : impl_(std::move(impl)), inc_(std::move(inc)), takeover_(std::move(takeover)) {}

  std::string scope() const override { return inc_->bot().uuid.str(); }
  std::string bot_id() const override { return inc_->bot().uuid.str(); }
  std::string account_id() const override { return inc_->account_id(); }
  std::shared_ptr<const pipeline::PipelineSnapshot> CachedPipeline() override {
    auto impl = impl_.lock();
    return impl ? impl->deps.pipelines->Cached(inc_->bot().use_pipeline_uuid) : nullptr;
  }
  util::Result<std::shared_ptr<const pipeline::PipelineSnapshot>> LoadPipeline() override {
    auto impl = impl_.lock();
    if (!impl) return util::Fail(ErrorCode::kUnavailable, "shutting down");
    return impl->deps.pipelines->Load(inc_->bot().use_pipeline_uuid);
  }
  void Refused(const domain::ReceivedMessage& message, const std::string& session_id,
               bool busy) override;
  std::shared_ptr<pipeline::Turn> Begin(const domain::ReceivedMessage& message,
                                        const std::string& session_id) override;

 private:
  std::weak_ptr<BotRuntimeManager::Impl> impl_;
  std::shared_ptr<Incarnation> inc_;
  std::shared_ptr<domain::Takeover> takeover_;  // null: nobody can take the message over
};

// One message of a running bot, from the log entry of its arrival to the reply's delivery.
class BotTurn final : public pipeline::Turn, public std::enable_shared_from_this<BotTurn> {
 public:
  BotTurn(std::weak_ptr<BotRuntimeManager::Impl> impl, std::shared_ptr<Incarnation> inc,
          const domain::ReceivedMessage& message, std::string session_id, std::string monitor_id,
          std::shared_ptr<domain::Takeover> takeover)
      : impl_(std::move(impl)),
        inc_(std::move(inc)),
        takeover_(std::move(takeover)),
        chat_type_(message.chat_type),
        chat_id_(message.chat_id),
        message_id_(message.message_id),
        session_id_(std::move(session_id)),
        monitor_id_(std::move(monitor_id)) {}

  void Log(LogLevel level, std::string text) override {
    if (auto impl = impl_.lock()) {
      impl->Log(inc_->bot().uuid, inc_->retention(), level, std::move(text), session_id_);
    }
  }

  bool Answering() override {
    auto impl = impl_.lock();
    return impl && impl->Live(inc_) != nullptr;
  }

  // The runner's text goes to the adapter while it is written when the adapter can stream and
  // the bot's config asks for it; otherwise nowhere, and the reply is sent whole.
  pipeline::PipelineEngine::OnDelta Stream() override {
    if (!streamed_) {
      auto impl = impl_.lock();
      if (!impl) return nullptr;
      auto live = impl->Live(inc_);
      if (!live) return nullptr;
      auto stream = live->adapter().BeginStream(chat_type_, chat_id_, message_id_);
      if (!stream) return nullptr;
      std::weak_ptr<BotTurn> weak = weak_from_this();
      streamed_ =
          std::make_shared<StreamedReply>(std::move(stream), *impl->deps.clock,
                                          impl->options.stream_interval, [weak](std::string why) {
                                            if (auto self = weak.lock())
                                              self->Log(LogLevel::kWarning, std::move(why));
                                          });
      streamed_by_ = live;
    }
    return [reply = streamed_](const domain::ChatDelta& delta) { reply->Add(delta.content); };
  }

  void Ignored(const pipeline::EngineOutcome& outcome) override {
    if (streamed_ && streamed_->Started()) streamed_->Abandon();
    if (auto impl = impl_.lock()) {
      if (outcome.failed) {
        impl->monitor.Failed(inc_->bot(), monitor_id_, session_id_, "pipeline", outcome.error);
      } else {
        impl->monitor.Ignored(inc_->bot(), monitor_id_);
      }
    }
  }

  bool TakenOver() override { return takeover_ && takeover_->Taken(); }

  // Sent on its own, not waited for: the reply does not depend on it.
  void Notify(domain::MessageChain notice) override {
    auto impl = impl_.lock();
    if (!impl || TakenOver()) return;
    auto target = impl->Live(inc_);
    if (!target) return;
    domain::OutgoingMessage out{chat_type_, chat_id_, std::move(notice)};
    if (!target->adapter().CheckDeliverable(out)) return;
    auto self = shared_from_this();
    std::string text = domain::DescribeChain(out.chain);
    target->adapter().Send(
        std::move(out), message_id_, [self, text](util::Result<domain::SendReceipt> sent) {
          if (sent) {
            self->Log(LogLevel::kInfo, "notice: " + text);
          } else {
            self->Log(LogLevel::kWarning, "a notice was not delivered: " + sent.error().message);
          }
        });
  }

  void Deliver(domain::MessageChain reply, std::string made_by, domain::ReplyForm form,
               std::function<void()> done) override {
    auto impl = impl_.lock();
    if (!impl) return done();
    if (TakenOver()) {
      Log(LogLevel::kInfo, "the reply was not sent: " + takeover_->TakenBy() +
                               " took the message over (skip_pipeline)");
      if (streamed_ && streamed_->Started()) streamed_->Abandon();
      return done();
    }
    domain::OutgoingMessage out{chat_type_, chat_id_, std::move(reply), form};
    // A restart while the model was thinking: the reply goes out through the new adapter.
    auto target = impl->Live(inc_);
    if (!target) {
      Log(LogLevel::kWarning,
          "the bot stopped before its reply could be sent: " + domain::DescribeChain(out.chain));
      return done();
    }
    inc_ = target;
    // The stream is finished by the adapter that began it; after a restart the reply is sent
    // whole through the new one (the old adapter has stopped).
    const bool streamed = streamed_ && streamed_->Started() && streamed_by_ == target;
    if (auto ok = inc_->adapter().CheckDeliverable(out); !ok) {
      Log(LogLevel::kError, "the reply cannot be delivered: " + ok.error().message);
      impl->monitor.Failed(inc_->bot(), monitor_id_, session_id_, "delivery", ok.error().message);
      if (streamed) streamed_->Abandon();
      return done();
    }
    std::string text = made_by.empty()
                           ? "reply: " + domain::DescribeChain(out.chain)
                           : "reply (" + made_by + "): " + domain::DescribeChain(out.chain);
    if (streamed) text.insert(5, " streamed");
    auto self = shared_from_this();
    auto sent_back = [self, text = std::move(text), reply_text = domain::DescribeChain(out.chain),
                      done = std::move(done)](util::Result<domain::SendReceipt> sent) {
      self->Monitor(sent, reply_text);
      if (sent) {
        self->Log(LogLevel::kInfo, text);
      } else {
        self->Log(LogLevel::kError, sent.error().code == ErrorCode::kCancelled
                                        ? "the bot stopped while its reply was being sent"
                                        : "the reply was not delivered: " + sent.error().message);
      }
      done();
    };
    if (streamed) {
      streamed_->Finish(std::move(out), std::move(sent_back));
    } else {
      inc_->adapter().Send(std::move(out), message_id_, std::move(sent_back));
    }
  }

 private:
  void Monitor(const util::Result<domain::SendReceipt>& sent, const std::string& reply_text) {
    auto impl = impl_.lock();
    if (!impl) return;
    if (sent) return impl->monitor.Replied(inc_->bot(), monitor_id_, session_id_, reply_text);
    impl->monitor.Failed(inc_->bot(), monitor_id_, session_id_, "delivery", sent.error().message);
  }

  std::weak_ptr<BotRuntimeManager::Impl> impl_;
  std::shared_ptr<Incarnation> inc_;            // replaced by its successor when the bot restarted
  std::shared_ptr<domain::Takeover> takeover_;  // null: nobody can take the message over
  std::shared_ptr<StreamedReply> streamed_;     // null: the reply is sent whole
  std::shared_ptr<Incarnation> streamed_by_;    // the incarnation whose adapter streams it
  const domain::TargetType chat_type_;
  const std::string chat_id_;
  const std::string message_id_;
  const std::string session_id_;
  const std::string monitor_id_;  // the message's monitoring record; empty when off
};

void BotOrigin::Refused(const domain::ReceivedMessage& message, const std::string& session_id,
                        bool busy) {
  auto impl = impl_.lock();
  if (!impl) return;
  impl->monitor.Refused(inc_->bot(), message, session_id, busy ? "queue full" : "bot stopped");
  if (!busy) {
    impl->Log(inc_->bot().uuid, inc_->retention(), LogLevel::kWarning,
              "a message arrived while the bot stopped and was not answered", session_id);
    return;
  }
  impl->Log(inc_->bot().uuid, inc_->retention(), LogLevel::kWarning,
            "too many messages waiting: one from " + session_id + " was dropped", session_id);
  // The sender is told, so the message is not silently lost.
  auto target = impl->Live(inc_);
  if (!target) return;
  domain::OutgoingMessage notice{
      message.chat_type, message.chat_id, {Plain(impl->options.busy_notice)}};
  if (target->adapter().CheckDeliverable(notice)) {
    target->adapter().Send(std::move(notice), message.message_id,
                           [](util::Result<domain::SendReceipt>) {});
  }
}

std::shared_ptr<pipeline::Turn> BotOrigin::Begin(const domain::ReceivedMessage& message,
                                                 const std::string& session_id) {
  auto impl = impl_.lock();
  if (!impl) return nullptr;
  auto live = impl->Live(inc_);
  if (!live) return nullptr;
  const std::string who = message.sender_name.empty() ? message.sender_id : message.sender_name;
  impl->Log(live->bot().uuid, live->retention(), LogLevel::kInfo,
            fmt::format("message from {}: {}", who, domain::DescribeChain(message.chain)),
            session_id, domain::ImageUrlsOf(message.chain));
  if (takeover_ && impl->options.takeover_window.count() > 0) {
    takeover_->WaitTaken(impl->options.takeover_window);  // Begin runs on the blocking pool
  }
  if (takeover_ && takeover_->Taken()) {
    impl->Log(live->bot().uuid, live->retention(), LogLevel::kInfo,
              takeover_->TakenBy() + " took the message over (skip_pipeline): no pipeline run",
              session_id);
  }
  return std::make_shared<BotTurn>(impl_, live, message, session_id,
                                   impl->monitor.Received(live->bot(), message, session_id),
                                   takeover_);
}

void BotRuntimeManager::Impl::Dispatch(const std::shared_ptr<Incarnation>& inc,
                                       domain::ReceivedMessage message) {
  {
    std::lock_guard lock(mu);
    if (shut_down) return;
  }
  std::shared_ptr<domain::Takeover> takeover;
  if (deps.takeover != nullptr) {
    takeover = deps.takeover->OnReceived(inc->bot().uuid.str(), inc->bot().adapter, message);
  }
  deps.driver->Submit(std::make_shared<BotOrigin>(weak_from_this(), inc, std::move(takeover)),
                      std::move(message));
}

BotRuntimeManager::BotRuntimeManager(RuntimeDeps deps, RuntimeOptions options)
    : impl_(std::make_shared<Impl>(std::move(deps), std::move(options))) {}

BotRuntimeManager::~BotRuntimeManager() = default;

std::optional<RuntimeStatus> BotRuntimeManager::Status(const util::BotId& id) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->bots.find(id.str());
  if (it == impl_->bots.end() || it->second.removed) return std::nullopt;
  return it->second.status;
}

void BotRuntimeManager::Apply(const domain::Bot& bot) { impl_->Apply(bot); }

void BotRuntimeManager::SetTakeoverListener(domain::MessageTakeoverListener* listener,
                                            std::chrono::milliseconds window) {
  impl_->deps.takeover = listener;
  impl_->options.takeover_window = window;
}

void BotRuntimeManager::Remove(const util::BotId& id) {
  std::shared_ptr<Incarnation> old;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->bots.find(id.str());
    if (it == impl_->bots.end()) return;
    old = std::move(it->second.current);
    it->second.current = nullptr;
    if (old) ++it->second.stopping;
    if (it->second.stopping == 0) {
      impl_->bots.erase(it);
    } else {
      // Kept (as a tombstone) until the last adapter stopped, so a quick re-Apply still waits.
      it->second.removed = true;
      it->second.status = {RuntimeState::kStopped, "", impl_->deps.clock->Now(), ""};
    }
  }
  if (old) impl_->Retire(id.str(), std::move(old));
}

void BotRuntimeManager::Send(const util::BotId& id, const domain::OutgoingMessage& message,
                             std::function<void(util::Result<domain::SendReceipt>)> done) {
  std::shared_ptr<Incarnation> inc;
  RuntimeStatus status;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->bots.find(id.str());
    if (it != impl_->bots.end() && !it->second.removed) {
      inc = it->second.current;
      status = it->second.status;
    }
  }
  if (!inc || status.state != RuntimeState::kRunning) {
    std::string why = fmt::format("bot {} is not running", id.str());
    if (status.state == RuntimeState::kError) why += ": " + status.error;
    if (status.state == RuntimeState::kStarting) why = fmt::format("bot {} is starting", id.str());
    return done(util::Fail(ErrorCode::kConflict, why));
  }
  if (auto ok = inc->adapter().CheckDeliverable(message); !ok) {
    return done(tl::unexpected(ok.error()));
  }
  const std::string session =
      pipeline::SessionId(pipeline::LauncherOf(message.target_type), message.target_id);
  std::weak_ptr<Impl> weak = impl_;
  std::string text = domain::DescribeChain(message.chain);
  // The platform's own timeouts bound the wait; no thread waits with it.
  inc->adapter().Send(
      message, "",
      [weak, inc, id, session, text = std::move(text),
       done = std::move(done)](util::Result<domain::SendReceipt> sent) {
        if (auto self = weak.lock()) {
          if (sent) {
            self->Log(id, inc->retention(), LogLevel::kInfo, "sent through the API: " + text,
                      session);
          } else {
            self->Log(id, inc->retention(), LogLevel::kError,
                      "sending through the API failed: " + sent.error().message, session);
          }
        }
        if (!sent && sent.error().code == ErrorCode::kCancelled) {
          return done(util::Fail(ErrorCode::kConflict, fmt::format("bot {} stopped", id.str())));
        }
        done(std::move(sent));
      });
}

void BotRuntimeManager::StartAll(const std::vector<domain::Bot>& bots) {
  for (const auto& bot : bots) {
    if (bot.enable) impl_->Apply(bot);
  }
}

void BotRuntimeManager::HandlePlatformCall(
    const util::BotId& id, domain::PlatformCall call,
    std::function<void(util::Result<domain::PlatformAnswer>)> answer) {
  std::shared_ptr<Incarnation> inc;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->bots.find(id.str());
    if (it != impl_->bots.end()) inc = it->second.current;
  }
  if (!inc || inc->stop_requested()) {
    return answer(util::Fail(ErrorCode::kConflict, fmt::format("bot {} is not running", id.str())));
  }
  if (!inc->started()) {
    // Restarting: the previous adapter is still closing. The platform retries (503).
    util::Error restarting{ErrorCode::kUnavailable, fmt::format("bot {} is restarting", id.str())};
    restarting.retry_after_seconds = 1;
    return answer(tl::unexpected(std::move(restarting)));
  }
  inc->adapter().HandleWebhook(
      std::move(call),
      [answer = std::move(answer)](domain::PlatformAnswer a) { answer(std::move(a)); });
}

util::Result<domain::PlatformSocketHandlers> BotRuntimeManager::OpenPlatformSocket(
    const util::BotId& id, domain::PlatformCall call,
    std::shared_ptr<domain::PlatformSocket> socket) {
  std::shared_ptr<Incarnation> inc;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->bots.find(id.str());
    if (it != impl_->bots.end()) inc = it->second.current;
  }
  if (!inc || inc->stop_requested()) {
    return util::Fail(ErrorCode::kConflict, fmt::format("bot {} is not running", id.str()));
  }
  if (!inc->started()) {
    util::Error restarting{ErrorCode::kUnavailable, fmt::format("bot {} is restarting", id.str())};
    restarting.retry_after_seconds = 1;
    return tl::unexpected(std::move(restarting));
  }
  // The adapter's Stop closes the sockets it took; their handlers hold what they need.
  return inc->adapter().AcceptSocket(std::move(call), std::move(socket));
}

void BotRuntimeManager::PipelineChanged(const util::PipelineId& id) {
  impl_->deps.pipelines->Changed(id);
  // Re-read at once (the pipeline service calls this where it may block), so messages right
  // after the change find the new settings cached.
  (void)impl_->deps.pipelines->Load(id);
}

void BotRuntimeManager::StopAll(std::chrono::milliseconds grace) {
  std::vector<std::shared_ptr<Incarnation>> running;
  {
    std::lock_guard lock(impl_->mu);
    impl_->shut_down = true;
    impl_->deps.driver->Close();
    for (auto& [key, entry] : impl_->bots) {
      if (entry.current) running.push_back(std::move(entry.current));
      entry.status = {RuntimeState::kStopped, "", impl_->deps.clock->Now(), ""};
    }
  }
  for (auto& inc : running) impl_->StopIncarnation(inc, nullptr);
  std::unique_lock lock(impl_->mu);
  if (!impl_->stopped_cv.wait_for(lock, grace, [&] { return impl_->stopping_all.empty(); })) {
    spdlog::warn("{} bot(s) did not stop within {} ms", impl_->stopping_all.size(), grace.count());
  }
}

void BotRuntimeManager::CommitLogs() { impl_->log_writer.Commit(); }

std::size_t BotRuntimeManager::InFlight() const { return impl_->deps.driver->InFlight(); }

}  // namespace sb::runtime
