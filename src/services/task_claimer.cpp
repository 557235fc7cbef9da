#include "services/task_claimer.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace sb::services {

TaskClaimer::TaskClaimer(domain::TaskRepository& repo, const util::Clock& clock,
                         std::map<std::string, TaskResumer> resumers_by_kind,
                         TaskClaimerOptions options)
    : repo_(repo),
      clock_(clock),
      resumers_(std::move(resumers_by_kind)),
      options_(std::move(options)) {}

TaskClaimer::~TaskClaimer() { Stop(); }

void TaskClaimer::Start() {
  RunOnce();
  std::lock_guard lock(mu_);
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void TaskClaimer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TaskClaimer::Loop() {
  using Clock = std::chrono::steady_clock;
  const auto renew_every = std::max(options_.ttl / 3, std::chrono::milliseconds(100));
  auto next_renew = Clock::now() + renew_every;
  auto next_scan = Clock::now() + options_.scan_interval;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_until(lock, std::min(next_renew, next_scan), [this] { return stopping_; });
    if (stopping_) return;
    const auto now = Clock::now();
    lock.unlock();
    // A renewal that comes late (a slow database) only risks a takeover, which the fenced
    // updates make safe; it never blocks the scan.
    if (now >= next_renew) {
      Renew();
      next_renew = now + renew_every;
    }
    if (now >= next_scan) {
      Claim();
      next_scan = now + options_.scan_interval;
    }
    lock.lock();
  }
}

int TaskClaimer::RunOnce() {
  Renew();
  return Claim();
}

void TaskClaimer::Renew() {
  if (auto r = repo_.Renew(options_.instance_id, options_.ttl); !r) {
    spdlog::warn("tasks: cannot renew the leases of this instance's tasks: {}", r.error().message);
  }
}

int TaskClaimer::Claim() {
  auto claimed = repo_.Claim(options_.instance_id, options_.ttl, options_.batch);
  if (!claimed) {
    spdlog::warn("tasks: cannot look for orphaned tasks: {}", claimed.error().message);
    return 0;
  }
  for (auto& task : *claimed) {
    auto resumer = resumers_.find(task.kind);
    if (resumer == resumers_.end()) {
      const std::string why = fmt::format(
          "interrupted: the instance running it stopped, and a {} task cannot be resumed "
          "elsewhere; start it again",
          task.kind);
      Fail(std::move(task), why);
      continue;
    }
    spdlog::info("tasks: resuming task {} ({}), attempt {}, left by a stopped instance", task.id,
                 task.kind, task.attempts);
    util::Result<void> resumed = util::Fail(util::ErrorCode::kInternal, "the resumer threw");
    try {
      resumed = resumer->second(task);
    } catch (const std::exception& e) {
      resumed = util::Fail(util::ErrorCode::kInternal, fmt::format("cannot resume: {}", e.what()));
    }
    if (!resumed) {
      const std::string why = resumed.error().message;
      Fail(std::move(task), why);
    }
  }
  return static_cast<int>(claimed->size());
}

void TaskClaimer::Fail(domain::Task task, const std::string& why) {
  spdlog::warn("tasks: task {} ({}) failed: {}", task.id, task.kind, why);
  task.status = domain::TaskStatus::kFailed;
  task.current_action = "failed";
  task.exception = why;
  task.log += "failed: " + why + "\n";
  task.updated_at = clock_.Now();
  if (auto r = repo_.Update(task); !r) {
    spdlog::warn("tasks: cannot save task {}: {}", task.id, r.error().message);
  }
}

}  // namespace sb::services
