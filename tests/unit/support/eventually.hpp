// Polls a condition that another thread (or process) makes true, for tests of asynchronous work.
//   EXPECT_TRUE(test::Eventually([&] { return plugin.running(); }));
#pragma once

#include <chrono>
#include <thread>

namespace sb::test {

// True as soon as `pred()` is; false when it is still false after `limit`.
template <typename Pred>
bool Eventually(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

}  // namespace sb::test
