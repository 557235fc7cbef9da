#include "runtime/message_aggregator.hpp"

#include <boost/asio/steady_timer.hpp>
#include <utility>

namespace sb::runtime {

namespace asio = boost::asio;

struct MessageAggregator::Pending {
  explicit Pending(const asio::any_io_executor& executor) : timer(executor) {}
  platforms::ReceivedMessage message;
  Deliver deliver;
  asio::steady_timer timer;
  std::uint64_t generation = 0;  // of the newest wait; older timer completions are stale
  int merged = 0;
};

std::shared_ptr<MessageAggregator> MessageAggregator::Make(asio::any_io_executor executor) {
  return std::shared_ptr<MessageAggregator>(new MessageAggregator(std::move(executor)));
}

MessageAggregator::MessageAggregator(asio::any_io_executor executor)
    : executor_(std::move(executor)) {}

void MessageAggregator::Add(const std::string& key, platforms::ReceivedMessage message,
                            std::chrono::milliseconds delay, Deliver deliver) {
  std::shared_ptr<Pending> ready;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    auto& slot = pending_[key];
    if (!slot) {
      slot = std::make_shared<Pending>(executor_);
      slot->message = std::move(message);
      slot->deliver = std::move(deliver);
    } else {
      auto& held = slot->message;
      domain::MessageElement gap;
      gap.type = domain::ElementType::kPlain;
      gap.text = "\n";
      held.chain.push_back(std::move(gap));
      for (auto& element : message.chain) {
        // One Source per message: the merged message is the newest one.
        if (element.type == domain::ElementType::kSource) continue;
        held.chain.push_back(std::move(element));
      }
      for (auto& element : held.chain) {
        if (element.type == domain::ElementType::kSource) element.id = message.message_id;
      }
      held.message_id = std::move(message.message_id);
      held.sender_id = std::move(message.sender_id);
      held.sender_name = std::move(message.sender_name);
    }
    slot->generation = ++generation_;
    if (++slot->merged >= kMaxMerged) {
      ready = std::move(slot);
      pending_.erase(key);
    } else {
      slot->timer.expires_after(delay);
      std::weak_ptr<MessageAggregator> weak = weak_from_this();
      slot->timer.async_wait(
          [weak, key, generation = slot->generation](const boost::system::error_code&) {
            if (auto self = weak.lock()) self->Fire(key, generation);
          });
    }
  }
  if (ready) {
    ready->timer.cancel();
    ready->deliver(std::move(ready->message));
  }
}

void MessageAggregator::Fire(const std::string& key, std::uint64_t generation) {
  std::shared_ptr<Pending> ready;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(key);
    if (it == pending_.end() || it->second->generation != generation) return;
    ready = std::move(it->second);
    pending_.erase(it);
  }
  ready->deliver(std::move(ready->message));
}

void MessageAggregator::Close() {
  std::map<std::string, std::shared_ptr<Pending>> dropped;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    dropped.swap(pending_);
  }
  for (auto& [key, pending] : dropped) pending->timer.cancel();
}

std::size_t MessageAggregator::Held() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

}  // namespace sb::runtime
