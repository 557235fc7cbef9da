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
};

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
  // The body is created on the strand, so even its first step runs after registration.
  asio::co_spawn(
      member->strand, [body = std::move(body)]() { return body(); },
      asio::bind_cancellation_slot(member->signal.slot(),
                                   [self, member](std::exception_ptr) { self->Ended(member); }));
  // A Close between the registration above and co_spawn emitted before the coroutine could
  // listen. Emitting again now lands after its start on the strand, so the stop is not lost.
  bool closed = false;
  {
    std::lock_guard lock(mu_);
    closed = closed_;
  }
  if (closed) {
    asio::post(member->strand,
               [member] { member->signal.emit(asio::cancellation_type::terminal); });
  }
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
  for (auto& member : running) {
    asio::post(member->strand,
               [member] { member->signal.emit(asio::cancellation_type::terminal); });
  }
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
