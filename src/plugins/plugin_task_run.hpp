// The task row of one background plugin operation (install, upgrade, delete), saved as it
// advances. Internal to the plugin manager's source files.
#pragma once

#include <spdlog/spdlog.h>

#include <cstdint>
#include <string>

#include "plugins/plugin_manager.hpp"

namespace sb::plugins {

// The first action logged by a task resumed after the instance running it died.
inline constexpr const char* kResumed = "resumed after the instance running it stopped";

// One background operation's task row, saved as it advances.
class ProcessPluginManager::TaskRun {
 public:
  TaskRun(domain::TaskRepository& repo, const util::Clock& clock, domain::Task task)
      : repo_(repo), clock_(clock), task_(std::move(task)) {}

  void Action(const std::string& action) {
    task_.current_action = action;
    task_.log += action + "\n";
    Save();
  }
  void Progress(const char* key, std::uint64_t value) {
    task_.metadata[key] = value;
    Save();
  }
  void Running() {
    task_.status = domain::TaskStatus::kRunning;
    Save();
  }
  void Finish(util::Result<util::Json> result) {
    if (result) {
      task_.status = domain::TaskStatus::kSucceeded;
      task_.current_action = "done";
      task_.result = std::move(*result);
    } else {
      task_.status = domain::TaskStatus::kFailed;
      task_.exception = result.error().message;
      task_.log += "failed: " + result.error().message + "\n";
    }
    Save();
  }

  // True once another instance claimed the task (this one's lease lapsed): the work should stop
  // before it changes anything shared, as the new owner runs it again.
  bool lost() const { return lost_; }

 private:
  void Save() {
    if (lost_) return;
    task_.updated_at = clock_.Now();
    if (auto saved = repo_.Update(task_); !saved) {
      lost_ = saved.error().code == util::ErrorCode::kConflict;
      spdlog::warn("could not save task {}: {}", task_.id, saved.error().message);
    }
  }
  domain::TaskRepository& repo_;
  const util::Clock& clock_;
  domain::Task task_;
  bool lost_ = false;  // only the task's own thread uses the run
};

}  // namespace sb::plugins
