#include "pipeline/message_aggregator.hpp"

#include <utility>

namespace sb::pipeline {

namespace {

void Merge(domain::ReceivedMessage& held, domain::ReceivedMessage message) {
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

}  // namespace

std::shared_ptr<MessageAggregator> MessageAggregator::Make(const util::Clock& clock) {
  return std::shared_ptr<MessageAggregator>(new MessageAggregator(clock));
}

void MessageAggregator::Add(const std::string& key, domain::ReceivedMessage message,
                            util::Duration delay, Deliver deliver) {
  Pending ready;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    auto [it, fresh] = pending_.try_emplace(key);
    auto& [generation, slot] = it->second;
    if (fresh) {
      slot.message = std::move(message);
      slot.deliver = std::move(deliver);
    } else {
      slot.timer.Cancel();
      Merge(slot.message, std::move(message));
    }
    generation = ++generation_;
    if (++slot.merged < kMaxMerged) {
      std::weak_ptr<MessageAggregator> weak = weak_from_this();
      slot.timer = clock_.After(delay, [weak, key, generation = generation] {
        if (auto self = weak.lock()) self->Fire(key, generation);
      });
      return;
    }
    ready = std::move(slot);
    pending_.erase(it);
  }
  ready.deliver(std::move(ready.message));
}

void MessageAggregator::Fire(const std::string& key, std::uint64_t generation) {
  Pending ready;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(key);
    if (it == pending_.end() || it->second.first != generation) return;
    ready = std::move(it->second.second);
    pending_.erase(it);
  }
  ready.deliver(std::move(ready.message));
}

void MessageAggregator::Close() {
  std::map<std::string, std::pair<std::uint64_t, Pending>> dropped;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    dropped.swap(pending_);
  }
  for (auto& [key, entry] : dropped) entry.second.timer.Cancel();
}

std::size_t MessageAggregator::Held() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

}  // namespace sb::pipeline
