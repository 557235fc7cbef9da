#include "platforms/coroutine_group.hpp"

#include <algorithm>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <exception>
#include <utility>

namespace sb::platforms {

namespace asio = boost::asio;

// One coroutine: its own strand, so Close (from any thread) and the coroutine never touch the
// cancellation signal at the same time.
struct CoroutineGroup::Member {
  explicit Member(const asio::any_io_executor& executor) : strand(asio::make_strand(executor)) {}
  asio::strand<asio::any_io_executor> strand;
  asio::cancellation_signal signal;
  // Both on the strand only.
  bool started = false;         // the body has taken its first step
  bool stop_requested = false;  // Close reached this member
};

// The signal is emitted only once the body has started, never before. Asio 1.81's co_spawn entry
// point (impl/co_spawn.hpp) ends a coroutine that never suspended with a `co_await post`
// outside its try block, with throw_if_cancelled still on: a cancellation delivered before the
// first step (a Close racing a Spawn) fails the co_await of the body and then that one, and the
// exception ("co_await: Operation canceled") leaves io_context::run(), which terminates the
// process. A stop that comes that early is remembered instead, and the body is not run at all.
asio::awaitable<void> CoroutineGroup::Run(std::shared_ptr<Member> member,
                                          std::function<asio::awaitable<void>()> body) {
  if (member->stop_requested) co_return;
  member->started = true;
  co_await body();
}

void CoroutineGroup::Cancel(const std::shared_ptr<Member>& member) {
  asio::post(member->strand, [member] {
    member->stop_requested = true;
    // Once started, the body's first step has already run, up to its first suspension or its
    // end, in an earlier turn of this strand: the emit never meets a coroutine still starting.
    if (member->started) member->signal.emit(asio::cancellation_type::terminal);
  });
}

std::shared_ptr<CoroutineGroup> CoroutineGroup::Make(asio::any_io_executor executor) {
  return std::shared_ptr<CoroutineGroup>(new CoroutineGroup(std::move(executor)));
}

CoroutineGroup::CoroutineGroup(asio::any_io_executor executor) : executor_(std::move(executor)) {}

bool CoroutineGroup::Spawn(std::function<asio::awaitable<void>()> body) {
  auto member = std::make_shared<Member>(executor_);
  {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    members_.push_back(member);
  }
  auto self = shared_from_this();
  // The body is created on the strand, so even its first step runs after registration. A Close
  // between the registration above and this co_spawn is not lost: Run sees its stop_requested.
  asio::co_spawn(
      member->strand, Run(member, std::move(body)),
      asio::bind_cancellation_slot(member->signal.slot(),
                                   [self, member](std::exception_ptr) { self->Ended(member); }));
  return true;
}

void CoroutineGroup::Close(std::function<void()> empty) {
  std::vector<std::shared_ptr<Member>> running;
  bool run_now = false;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    running = members_;
    if (running.empty()) {
      run_now = true;
    } else {
      on_empty_ = std::move(empty);
    }
  }
  if (run_now) {
    if (empty) empty();
    return;
  }
  for (auto& member : running) Cancel(member);
}

std::size_t CoroutineGroup::Running() const {
  std::lock_guard lock(mu_);
  return members_.size();
}

void CoroutineGroup::Ended(const std::shared_ptr<Member>& member) {
  std::function<void()> empty;
  {
    std::lock_guard lock(mu_);
    members_.erase(std::remove(members_.begin(), members_.end(), member), members_.end());
    if (closed_ && members_.empty()) empty = std::move(on_empty_);
  }
  if (empty) empty();
}

}  // namespace sb::platforms
