// Tasks outlive the instance that runs them: every instance renews the leases of the tasks it
// runs and claims, every few seconds, tasks whose owner let the lease lapse (it died, or this
// instance's own last process did). A claimed task of a kind with a resumer is handed to it to
// run on from what its row records; any other is failed with the reason, never left "running".
//   TaskClaimer claimer(storage.tasks(), clock, {{"plugin-install", resume_install}},
//                       {.instance_id = id});
//   claimer.Start();   // claims what is orphaned now, then keeps at it on a thread
//   claimer.Stop();
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "domain/task.hpp"
#include "util/clock.hpp"

namespace sb::services {

struct TaskClaimerOptions {
  std::string instance_id;
  std::chrono::milliseconds ttl = domain::kTaskLeaseTtl;  // renewed every third of it
  // How often lapsed tasks are looked for: a dead owner's task moves within ttl + scan_interval.
  std::chrono::milliseconds scan_interval{2000};
  int batch = 8;  // tasks claimed per round at most
};

// Takes a task this instance has just claimed (its row's owner is this instance) and runs it on
// in the background. An error means it cannot: the task is then failed with that message.
using TaskResumer = std::function<util::Result<void>(const domain::Task&)>;

// Thread-safe.
class TaskClaimer {
 public:
  TaskClaimer(domain::TaskRepository& repo, const util::Clock& clock,
              std::map<std::string, TaskResumer> resumers_by_kind, TaskClaimerOptions options);
  ~TaskClaimer();  // Stop()
  TaskClaimer(const TaskClaimer&) = delete;
  TaskClaimer& operator=(const TaskClaimer&) = delete;

  // One round now (blocking), then rounds on a thread of its own.
  void Start();
  // Ends the thread: leases are no longer renewed (they lapse, and another instance resumes what
  // this one was running). Blocking; idempotent.
  void Stop();

  // One round: renews the leases held, then claims lapsed tasks and resumes or fails each. The
  // number claimed (tests drive rounds with this instead of the thread).
  int RunOnce();

 private:
  void Loop();
  void Renew();
  int Claim();
  void Fail(domain::Task task, const std::string& why);

  domain::TaskRepository& repo_;
  const util::Clock& clock_;
  const std::map<std::string, TaskResumer> resumers_;
  const TaskClaimerOptions options_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace sb::services
