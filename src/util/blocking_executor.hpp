// Where work that may block (SQL, hashing) is sent from code that must not block, such as the
// completion callbacks of external calls, which run on I/O threads.
//   blocking.Post([=] { repo.Update(model); done(result); });
//   blocking.PostAfter(20ms, [=] { writer.Drain(); });  // group commits: one per interval
#pragma once

#include <chrono>
#include <functional>

namespace sb::util {

// Thread-safe. Tasks run in no particular order on threads that may block.
class BlockingExecutor {
 public:
  virtual ~BlockingExecutor() = default;
  virtual void Post(std::function<void()> task) = 0;

  // Runs `task` no sooner than `delay` from now, for work that gains from waiting (batching
  // writes into fewer transactions). An executor without a clock (tests) may run it at once.
  virtual void PostAfter(std::chrono::milliseconds delay, std::function<void()> task) {
    (void)delay;
    Post(std::move(task));
  }
};

}  // namespace sb::util
