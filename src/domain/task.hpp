// Background tasks (plugin install, upgrade, delete, knowledge ingestion): persisted so a client
// can poll them on any instance. A task is run by the instance holding its lease (`owner`, renewed
// while it runs); when the owner dies the lease lapses and another instance claims the task and
// resumes it from `spec`, or fails it with the reason when it cannot be resumed.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::domain {

enum class TaskStatus { kPending, kRunning, kSucceeded, kFailed, kCancelled };

const char* TaskStatusName(TaskStatus status);

struct Task {
  std::int64_t id = 0;    // assigned by the repository
  std::string task_type;  // e.g. "plugin-operation"
  std::string kind;       // e.g. "plugin-install"
  std::string name;
  std::string label;
  TaskStatus status = TaskStatus::kPending;
  std::string current_action;
  std::string log;
  util::JsonObject metadata;  // progress numbers
  std::string exception;      // the reason, when failed
  util::Json result;          // null until done
  util::TimePoint created_at;
  util::TimePoint updated_at;
  // The instance running it ("" for none: claimable at once). Updates are fenced by it: a task
  // claimed by another instance no longer takes the old owner's saves.
  std::string owner;
  // What another instance needs to resume it (e.g. {"source": "marketplace", "author": ...}).
  util::JsonObject spec;
  int attempts = 0;  // how many times it was claimed after its owner's lease lapsed
};

// How long a task's lease lasts from its insertion or last renewal (renewed every third of it).
inline constexpr std::chrono::milliseconds kTaskLeaseTtl{10000};

struct TaskFilter {
  std::optional<std::string> task_type;
  std::optional<std::string> kind;
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class TaskRepository {
 public:
  virtual ~TaskRepository() = default;
  // Stores `task` and returns its new id. A task with an owner is leased to it for kTaskLeaseTtl.
  virtual util::Result<std::int64_t> Insert(const Task& task) = 0;
  // Replaces the mutable fields (status, action, log, metadata, exception, result, updated_at) of
  // the task if `task.owner` still owns it: kConflict when another owner claimed it meanwhile.
  virtual util::Result<void> Update(const Task& task) = 0;
  // kNotFound when absent.
  virtual util::Result<Task> Get(std::int64_t id) = 0;
  // Newest first.
  virtual util::Result<std::vector<Task>> List(const TaskFilter& filter) = 0;
  // Marks every pending or running task failed with `reason`; returns how many.
  virtual util::Result<int> FailUnfinished(const std::string& reason, util::TimePoint now) = 0;

  // Leases, by the database's clock. Extends to `ttl` from now the lease of every unfinished task
  // `owner` holds; returns how many.
  virtual util::Result<int> Renew(const std::string& owner, std::chrono::milliseconds ttl) = 0;
  // Claims for `owner`, until `ttl` from now, at most `limit` unfinished tasks whose lease lapsed
  // (or that have no owner), oldest first, and returns them as claimed (owner set, attempts
  // counted). Tasks `owner` itself holds are never claimed (it may still run them). Two claimers
  // never get the same task: on PostgreSQL rows are locked with FOR UPDATE SKIP LOCKED.
  virtual util::Result<std::vector<Task>> Claim(const std::string& owner,
                                                std::chrono::milliseconds ttl, int limit) = 0;
  // Gives up every unfinished task `owner` holds (at start: the last process of this instance
  // died with them), so that any instance, this one included, may claim them at once.
  virtual util::Result<int> ReleaseAll(const std::string& owner) = 0;
};

}  // namespace sb::domain
