// Background tasks as clients see them: created and advanced by the operations that run them
// (plugin install, upgrade, delete, knowledge ingestion), polled through `/system/tasks` on any
// instance. Each task is owned (leased) by the instance that runs it; see domain/task.hpp and
// services/task_claimer.hpp for how a dead owner's tasks move.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "domain/task.hpp"
#include "util/clock.hpp"

namespace sb::services {

// The task repository as this instance's operations use it: every task inserted through it is
// owned by `instance_id` (stamped on Insert), so that the claimer renews it while it runs and
// another instance resumes it when this one dies. An update of a task whose copy does not say its
// owner (the operation kept the copy it inserted) is made as `instance_id`, so it is fenced too.
// Thread-safe; blocking.
class OwnedTaskRepository final : public domain::TaskRepository {
 public:
  OwnedTaskRepository(domain::TaskRepository& repo, std::string instance_id)
      : repo_(repo), instance_id_(std::move(instance_id)) {}

  util::Result<std::int64_t> Insert(const domain::Task& task) override {
    domain::Task owned = task;
    owned.owner = instance_id_;
    return repo_.Insert(owned);
  }
  util::Result<void> Update(const domain::Task& task) override {
    if (!task.owner.empty()) return repo_.Update(task);
    domain::Task owned = task;
    owned.owner = instance_id_;
    return repo_.Update(owned);
  }
  util::Result<domain::Task> Get(std::int64_t id) override { return repo_.Get(id); }
  util::Result<std::vector<domain::Task>> List(const domain::TaskFilter& filter) override {
    return repo_.List(filter);
  }
  util::Result<int> FailUnfinished(const std::string& reason, util::TimePoint now) override {
    return repo_.FailUnfinished(reason, now);
  }
  util::Result<int> Renew(const std::string& owner, std::chrono::milliseconds ttl) override {
    return repo_.Renew(owner, ttl);
  }
  util::Result<std::vector<domain::Task>> Claim(const std::string& owner,
                                                std::chrono::milliseconds ttl, int limit) override {
    return repo_.Claim(owner, ttl, limit);
  }
  util::Result<int> ReleaseAll(const std::string& owner) override {
    return repo_.ReleaseAll(owner);
  }

 private:
  domain::TaskRepository& repo_;
  const std::string instance_id_;
};

// Thread-safe; blocking (call from the blocking pool).
class TaskService {
 public:
  // `instance_id` owns the tasks created here ("" in CLI helpers and tests: unowned).
  TaskService(domain::TaskRepository& repo, const util::Clock& clock, std::string instance_id = "");

  // Single-instance shortcut kept for tools: every unfinished task is failed with that reason.
  util::Result<int> FailInterrupted();
  // At start: the tasks this instance held when its last process died are given up, so the
  // claimer (here or on another instance) resumes them. Returns how many.
  util::Result<int> ReleaseInterrupted();

  util::Result<std::vector<domain::Task>> List(const domain::TaskFilter& filter);
  // kNotFound naming the id.
  util::Result<domain::Task> Get(std::int64_t id);

  // For operations: a new task owned by this instance (`task` gets its id, owner and times), and
  // its updates (kConflict once another instance has claimed it).
  util::Result<std::int64_t> Create(domain::Task& task);
  util::Result<void> Save(domain::Task& task);

  // The repository that stamps this instance as the owner, for operations outside this layer
  // (plugins, MCP tests) that write their tasks themselves.
  domain::TaskRepository& repository() { return owned_; }
  const std::string& instance_id() const { return instance_id_; }

 private:
  domain::TaskRepository& repo_;
  const util::Clock& clock_;
  const std::string instance_id_;
  OwnedTaskRepository owned_;
};

}  // namespace sb::services
