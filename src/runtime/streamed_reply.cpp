#include "runtime/streamed_reply.hpp"

#include <utility>

namespace sb::runtime {

StreamedReply::StreamedReply(std::shared_ptr<platforms::ReplyStream> stream,
                             const util::Clock& clock, util::Duration interval,
                             std::function<void(std::string)> warn)
    : stream_(std::move(stream)), clock_(clock), interval_(interval), warn_(std::move(warn)) {}

void StreamedReply::Add(std::string_view piece) {
  if (piece.empty()) return;
  std::unique_lock lock(mu_);
  if (ended_) return;
  text_.append(piece);
  Pump(std::move(lock));
}

bool StreamedReply::Started() const {
  std::lock_guard lock(mu_);
  return started_;
}

void StreamedReply::Pump(std::unique_lock<std::mutex> lock) {
  if (ended_ || broken_ || in_flight_ || timer_set_ || shown_bytes_ == text_.size()) return;
  const util::TimePoint now = clock_.Now();
  if (started_ && now - last_update_ < interval_) {
    // Too soon after the last update: the newest text goes out when the interval is over.
    timer_set_ = true;
    const auto wait = std::chrono::duration_cast<util::Duration>(last_update_ + interval_ - now);
    std::weak_ptr<StreamedReply> weak = weak_from_this();
    timer_ = clock_.After(wait, [weak]() {
      auto self = weak.lock();
      if (!self) return;
      std::unique_lock relock(self->mu_);
      self->timer_set_ = false;
      self->Pump(std::move(relock));
    });
    return;
  }
  started_ = true;
  in_flight_ = true;
  last_update_ = now;
  shown_bytes_ = text_.size();
  std::string text = text_;
  lock.unlock();
  stream_->Update(std::move(text), [self = shared_from_this()](util::Result<void> r) {
    self->Updated(std::move(r));
  });
}

void StreamedReply::Updated(util::Result<void> result) {
  std::unique_lock lock(mu_);
  in_flight_ = false;
  if (!result) {
    broken_ = true;
    lock.unlock();
    if (warn_) warn_("the streamed reply could not be updated: " + result.error().message);
    lock.lock();
  }
  if (after_update_) {
    auto end = std::move(after_update_);
    after_update_ = nullptr;
    lock.unlock();
    end();
    return;
  }
  // Text that came while the update was in flight goes out now, or when the interval is over.
  Pump(std::move(lock));
}

void StreamedReply::End(std::function<void()> end) {
  std::unique_lock lock(mu_);
  if (ended_) return;
  ended_ = true;
  timer_.Cancel();
  timer_set_ = false;
  if (in_flight_) {
    after_update_ = std::move(end);
    return;
  }
  lock.unlock();
  end();
}

void StreamedReply::Finish(domain::OutgoingMessage message,
                           std::function<void(util::Result<domain::SendReceipt>)> done) {
  auto stream = stream_;
  End([stream, message = std::move(message), done = std::move(done)]() mutable {
    stream->Finish(std::move(message), std::move(done));
  });
}

void StreamedReply::Abandon() {
  auto stream = stream_;
  End([stream]() { stream->Abandon(); });
}

}  // namespace sb::runtime
