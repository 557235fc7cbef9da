// Conversation memory kept in the process only, for the pipeline debug chat of the console: its
// sessions belong to no bot (so they cannot live in the bots' table) and need not outlive a
// restart. Same round semantics as the SQLite repository; at most `max_conversations` are kept,
// the least recently used dropped first.
#pragma once

#include <cstddef>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "domain/conversation.hpp"

namespace sb::runtime {

class InMemoryConversations final : public domain::ConversationRepository {
 public:
  explicit InMemoryConversations(std::size_t max_conversations = 1000)
      : max_conversations_(max_conversations) {}

  util::Result<std::vector<domain::ConversationTurn>> Load(const domain::ConversationKey& key,
                                                           int max_rounds) override;
  util::Result<void> Append(const domain::ConversationKey& key,
                            const std::vector<domain::ConversationTurn>& turns,
                            int max_rounds) override;
  util::Result<void> Clear(const domain::ConversationKey& key) override;
  util::Result<void> ClearPipeline(const util::PipelineId& pipeline) override;
  util::Result<void> ClearBot(const util::BotId& bot) override;

 private:
  struct Turn {
    domain::ConversationTurn turn;
    long round = 0;
  };
  struct Conversation {
    std::string pipeline;
    std::string bot;
    std::vector<Turn> turns;
    long last_round = 0;
    std::list<std::string>::iterator recency;
  };
  static std::string KeyOf(const domain::ConversationKey& key);

  const std::size_t max_conversations_;
  std::mutex mu_;
  std::map<std::string, Conversation> conversations_;
  std::list<std::string> recency_;  // most recently used first
};

}  // namespace sb::runtime
