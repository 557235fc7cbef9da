// The coroutines one adapter runs (a poll loop, the sends in flight), kept together so that Stop
// can cancel them all and learn when the last one has ended: no poller or connection outlives
// its adapter.
//   group->Spawn([self]() -> asio::awaitable<void> { co_await self->PollLoop(); });
//   group->Close([stopped] { stopped(); });  // cancels each; runs once none is left
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace sb::platforms {

class CoroutineGroup : public std::enable_shared_from_this<CoroutineGroup> {
 public:
  static std::shared_ptr<CoroutineGroup> Make(boost::asio::any_io_executor executor);

  // Starts `body` on its own strand with a cancellation slot Close can trigger. Returns false,
  // without starting it, once Close was called; a Close racing this call may also keep the body
  // from ever running (then it counts as ended at once). An exception escaping `body` is swallowed
  // (the body is expected to report its own errors).
  bool Spawn(std::function<boost::asio::awaitable<void>()> body);

  // Cancels every running coroutine (terminal cancellation). `empty` runs exactly once, on any
  // thread, when none is left (at once when none runs). Later calls only add nothing: the first
  // `empty` is the one that runs.
  void Close(std::function<void()> empty);

  std::size_t Running() const;

 private:
  explicit CoroutineGroup(boost::asio::any_io_executor executor);
  struct Member;
  static boost::asio::awaitable<void> Run(std::shared_ptr<Member> member,
                                          std::function<boost::asio::awaitable<void>()> body);
  static void Cancel(const std::shared_ptr<Member>& member);
  void Ended(const std::shared_ptr<Member>& member);

  boost::asio::any_io_executor executor_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Member>> members_;
  bool closed_ = false;
  std::function<void()> on_empty_;
};

}  // namespace sb::platforms
