// Background tasks as clients see them: created and advanced by the operations that run them
// (plugin install, upgrade, delete), polled through `/system/tasks`.
#pragma once

#include <cstdint>
#include <vector>

#include "domain/task.hpp"
#include "util/clock.hpp"

namespace sb::services {

// Thread-safe; blocking (call from the blocking pool).
class TaskService {
 public:
  TaskService(domain::TaskRepository& repo, const util::Clock& clock);

  // At start: tasks that were running when the process died are failed with that reason.
  util::Result<int> FailInterrupted();

  util::Result<std::vector<domain::Task>> List(const domain::TaskFilter& filter);
  // kNotFound naming the id.
  util::Result<domain::Task> Get(std::int64_t id);

  // For operations: a new pending task, and its updates.
  util::Result<std::int64_t> Create(domain::Task task);
  util::Result<void> Save(domain::Task& task);

 private:
  domain::TaskRepository& repo_;
  const util::Clock& clock_;
};

}  // namespace sb::services
