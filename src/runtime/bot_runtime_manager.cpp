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
#include "runtime/bot_runtime_impl.hpp"

namespace sb::runtime {

using util::ErrorCode;

namespace {

bool SameRuntime(const domain::Bot& a, const domain::Bot& b) {
  return a.adapter == b.adapter && a.adapter_config == b.adapter_config && a.enable == b.enable &&
         a.use_pipeline_uuid == b.use_pipeline_uuid;
}

}  // namespace

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
  deps.driver->Submit(MakeBotOrigin(weak_from_this(), inc, std::move(takeover)),
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
  if (auto ok = impl_->MaySend(id); !ok) return done(tl::unexpected(ok.error()));
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

void BotRuntimeManager::SetSendFence(const domain::SendFence* fence) {
  impl_->fence.store(fence, std::memory_order_release);
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
