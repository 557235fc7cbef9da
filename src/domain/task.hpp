// Background tasks (plugin install, upgrade, delete): persisted so a client can poll them and so
// a task interrupted by a restart is reported as failed rather than forgotten.
#pragma once

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
};

struct TaskFilter {
  std::optional<std::string> task_type;
  std::optional<std::string> kind;
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class TaskRepository {
 public:
  virtual ~TaskRepository() = default;
  // Stores `task` and returns its new id.
  virtual util::Result<std::int64_t> Insert(const Task& task) = 0;
  // Replaces the mutable fields (status, action, log, metadata, exception, result, updated_at).
  virtual util::Result<void> Update(const Task& task) = 0;
  // kNotFound when absent.
  virtual util::Result<Task> Get(std::int64_t id) = 0;
  // Newest first.
  virtual util::Result<std::vector<Task>> List(const TaskFilter& filter) = 0;
  // Marks every pending or running task failed with `reason`; returns how many.
  virtual util::Result<int> FailUnfinished(const std::string& reason, util::TimePoint now) = 0;
};

}  // namespace sb::domain
