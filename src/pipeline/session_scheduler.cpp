#include "pipeline/session_scheduler.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>

namespace sb::pipeline {

SessionScheduler::SessionScheduler(std::size_t max_in_flight, std::size_t max_queued, Launch launch)
    : max_in_flight_(std::max<std::size_t>(1, max_in_flight)),
      max_queued_(max_queued),
      launch_(std::move(launch)) {}

bool SessionScheduler::Submit(const std::string& session_key, Job job) {
  std::deque<Start> starts;
  {
    std::lock_guard lock(mu_);
    Session& session = sessions_[session_key];
    // A job that can start at once does not wait, so it never counts against the queue.
    const bool starts_now = !session.running && in_flight_ < max_in_flight_;
    if (!starts_now && queued_ >= max_queued_) {
      if (!session.running && session.waiting.empty()) sessions_.erase(session_key);
      return false;
    }
    session.waiting.push_back(std::move(job));
    ++queued_;
    if (!session.running && !session.ready) {
      session.ready = true;
      ready_.push_back(session_key);
    }
    starts = TakeStartableLocked();
  }
  StartAll(std::move(starts));
  return true;
}

std::size_t SessionScheduler::InFlight() const {
  std::lock_guard lock(mu_);
  return in_flight_;
}

std::size_t SessionScheduler::Queued() const {
  std::lock_guard lock(mu_);
  return queued_;
}

void SessionScheduler::Yield(const std::string& session_key) {
  std::deque<Start> starts;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(session_key);
    if (it == sessions_.end() || !it->second.running || !it->second.holds_slot) return;
    it->second.holds_slot = false;
    --in_flight_;
    starts = TakeStartableLocked();
  }
  StartAll(std::move(starts));
}

void SessionScheduler::OnFinished(const std::string& key) {
  std::deque<Start> starts;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(key);
    if (it != sessions_.end()) {
      if (it->second.holds_slot) --in_flight_;
      it->second.holds_slot = false;
      it->second.running = false;
      if (it->second.waiting.empty()) {
        sessions_.erase(it);
      } else if (!it->second.ready) {
        it->second.ready = true;
        ready_.push_back(key);
      }
    }
    starts = TakeStartableLocked();
  }
  StartAll(std::move(starts));
}

std::deque<SessionScheduler::Start> SessionScheduler::TakeStartableLocked() {
  std::deque<Start> starts;
  while (in_flight_ < max_in_flight_ && !ready_.empty()) {
    std::string key = std::move(ready_.front());
    ready_.pop_front();
    Session& session = sessions_[key];
    session.ready = false;
    if (session.waiting.empty() || session.running) continue;
    Job job = std::move(session.waiting.front());
    session.waiting.pop_front();
    --queued_;
    session.running = true;
    session.holds_slot = true;
    ++in_flight_;
    starts.push_back({std::move(key), std::move(job)});
  }
  return starts;
}

void SessionScheduler::StartAll(std::deque<Start> starts) {
  for (auto& start : starts) {
    launch_([this, key = std::move(start.key), job = std::move(start.job)]() mutable {
      // Guards against a job calling `finished` twice: a second call would free a slot twice.
      auto done = std::make_shared<std::atomic<bool>>(false);
      job([this, key, done] {
        if (!done->exchange(true)) OnFinished(key);
      });
    });
  }
}

}  // namespace sb::pipeline
