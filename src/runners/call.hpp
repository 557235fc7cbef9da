// One call of an external runner in flight: its own strand, so Cancel (from any thread, e.g.
// CancelAll at shutdown) and the coroutine never touch the cancellation signal at once. Used by
// every external runner through runner_kit.hpp's CallLauncher. Spawned with
// bind_cancellation_slot like the LLM gateway's calls, which sidesteps Boost 1.81's co_spawn
// cancellation bug (asio #1332).
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <memory>

namespace sb::runners {

class Call final : public std::enable_shared_from_this<Call> {
 public:
  explicit Call(const boost::asio::any_io_executor& executor)
      : strand_(boost::asio::make_strand(executor)) {}

  void Cancel() {
    cancelled_ = true;
    boost::asio::post(strand_, [self = shared_from_this()] {
      self->signal_.emit(boost::asio::cancellation_type::terminal);
    });
  }

  boost::asio::strand<boost::asio::any_io_executor>& strand() { return strand_; }
  boost::asio::cancellation_signal& signal() { return signal_; }
  // A Cancel that came before the coroutine connected to the signal would be lost otherwise.
  bool cancelled() const { return cancelled_; }

 private:
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  boost::asio::cancellation_signal signal_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace sb::runners
