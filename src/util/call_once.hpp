// A callback that runs exactly once: with the value given first, or, if nothing gave one before
// the wrapper is destroyed, with a fallback. Async code hands it around by shared_ptr so that a
// coroutine destroyed without finishing (an exception, a stopped executor) still answers.
//   auto once = std::make_shared<CallOnce<Result<Receipt>>>(
//       std::move(done), [] { return util::Fail(ErrorCode::kCancelled, "the bot stopped"); });
//   (*once)(receipt);  // later calls, and the fallback, do nothing
#pragma once

#include <functional>
#include <mutex>
#include <utility>

namespace sb::util {

// Thread-safe.
template <typename Value>
class CallOnce {
 public:
  CallOnce(std::function<void(Value)> fn, std::function<Value()> fallback)
      : fn_(std::move(fn)), fallback_(std::move(fallback)) {}
  CallOnce(const CallOnce&) = delete;
  CallOnce& operator=(const CallOnce&) = delete;
  ~CallOnce() {
    if (fn_ && fallback_) fn_(fallback_());
  }

  void operator()(Value value) {
    std::function<void(Value)> fn;
    {
      std::lock_guard lock(mu_);
      fn = std::exchange(fn_, nullptr);
    }
    if (fn) fn(std::move(value));
  }

 private:
  std::mutex mu_;
  std::function<void(Value)> fn_;  // guarded by mu_ until the destructor
  std::function<Value()> fallback_;
};

}  // namespace sb::util
