#include "services/task_service.hpp"

#include <fmt/format.h>

namespace sb::services {

TaskService::TaskService(domain::TaskRepository& repo, const util::Clock& clock,
                         std::string instance_id)
    : repo_(repo),
      clock_(clock),
      instance_id_(std::move(instance_id)),
      owned_(repo, instance_id_) {}

util::Result<int> TaskService::FailInterrupted() {
  return repo_.FailUnfinished("interrupted: the server stopped while the task was running",
                              clock_.Now());
}

util::Result<int> TaskService::ReleaseInterrupted() {
  if (instance_id_.empty()) return 0;
  return repo_.ReleaseAll(instance_id_);
}

util::Result<std::vector<domain::Task>> TaskService::List(const domain::TaskFilter& filter) {
  return repo_.List(filter);
}

util::Result<domain::Task> TaskService::Get(std::int64_t id) {
  auto r = repo_.Get(id);
  if (!r && r.error().code == util::ErrorCode::kNotFound) {
    return util::Fail(util::ErrorCode::kNotFound, fmt::format("task {} does not exist", id));
  }
  return r;
}

util::Result<std::int64_t> TaskService::Create(domain::Task& task) {
  task.created_at = task.updated_at = clock_.Now();
  task.owner = instance_id_;
  auto id = repo_.Insert(task);
  if (id) task.id = *id;
  return id;
}

util::Result<void> TaskService::Save(domain::Task& task) {
  task.updated_at = clock_.Now();
  return owned_.Update(task);
}

}  // namespace sb::services
