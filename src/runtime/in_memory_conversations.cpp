#include "runtime/in_memory_conversations.hpp"

#include <algorithm>

namespace sb::runtime {

std::string InMemoryConversations::KeyOf(const domain::ConversationKey& key) {
  return key.pipeline.str() + "\n" + key.bot.str() + "\n" + key.session_id;
}

util::Result<std::vector<domain::ConversationTurn>> InMemoryConversations::Load(
    const domain::ConversationKey& key, int max_rounds) {
  if (max_rounds < 0) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "max rounds must not be negative");
  }
  std::vector<domain::ConversationTurn> out;
  std::lock_guard lock(mu_);
  auto it = conversations_.find(KeyOf(key));
  if (it == conversations_.end() || max_rounds == 0) return out;
  for (const auto& t : it->second.turns) {
    if (t.round > it->second.last_round - max_rounds) out.push_back(t.turn);
  }
  return out;
}

util::Result<void> InMemoryConversations::Append(const domain::ConversationKey& key,
                                                 const std::vector<domain::ConversationTurn>& turns,
                                                 int max_rounds) {
  if (max_rounds < 0) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "max rounds must not be negative");
  }
  std::lock_guard lock(mu_);
  const std::string k = KeyOf(key);
  auto it = conversations_.find(k);
  if (it == conversations_.end()) {
    recency_.push_front(k);
    it = conversations_
             .emplace(k, Conversation{key.pipeline.str(), key.bot.str(), {}, 0, recency_.begin()})
             .first;
  } else {
    recency_.splice(recency_.begin(), recency_, it->second.recency);
  }
  Conversation& c = it->second;
  for (const auto& turn : turns) {
    if (turn.message.role == "user") ++c.last_round;
    c.turns.push_back({turn, c.last_round});
  }
  const long keep_after = c.last_round - max_rounds;
  c.turns.erase(std::remove_if(c.turns.begin(), c.turns.end(),
                               [&](const Turn& t) { return t.round <= keep_after; }),
                c.turns.end());
  while (conversations_.size() > max_conversations_) {
    conversations_.erase(recency_.back());
    recency_.pop_back();
  }
  return util::Ok();
}

util::Result<void> InMemoryConversations::Clear(const domain::ConversationKey& key) {
  std::lock_guard lock(mu_);
  auto it = conversations_.find(KeyOf(key));
  if (it != conversations_.end()) {
    recency_.erase(it->second.recency);
    conversations_.erase(it);
  }
  return util::Ok();
}

util::Result<void> InMemoryConversations::ClearPipeline(const util::PipelineId& pipeline) {
  std::lock_guard lock(mu_);
  for (auto it = conversations_.begin(); it != conversations_.end();) {
    if (it->second.pipeline == pipeline.str()) {
      recency_.erase(it->second.recency);
      it = conversations_.erase(it);
    } else {
      ++it;
    }
  }
  return util::Ok();
}

util::Result<void> InMemoryConversations::ClearBot(const util::BotId& bot) {
  std::lock_guard lock(mu_);
  for (auto it = conversations_.begin(); it != conversations_.end();) {
    if (it->second.bot == bot.str()) {
      recency_.erase(it->second.recency);
      it = conversations_.erase(it);
    } else {
      ++it;
    }
  }
  return util::Ok();
}

}  // namespace sb::runtime
