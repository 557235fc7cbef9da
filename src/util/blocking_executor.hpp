// Where work that may block (SQL, hashing) is sent from code that must not block, such as the
// completion callbacks of external calls, which run on I/O threads.
//   blocking.Post([=] { repo.Update(model); done(result); });
#pragma once

#include <functional>

namespace sb::util {

// Thread-safe. Tasks run in no particular order on threads that may block.
class BlockingExecutor {
 public:
  virtual ~BlockingExecutor() = default;
  virtual void Post(std::function<void()> task) = 0;
};

}  // namespace sb::util
