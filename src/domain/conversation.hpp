// Conversation memory: the turns exchanged with a model in one chat session of one bot through one
// pipeline, kept across restarts and bounded by the pipeline's `max-round`.
//   auto history = repo.Load(key, max_rounds);            // oldest first, sent before the query
//   repo.Append(key, {user_turn, reply_turn}, max_rounds);  // after the model answered
#pragma once

#include <string>
#include <vector>

#include "domain/llm.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"

namespace sb::domain {

// One conversation per (pipeline, bot, session). A pipeline change does not move memory to the
// new pipeline: the caller clears what the change invalidates.
struct ConversationKey {
  util::PipelineId pipeline;
  util::BotId bot;
  std::string session_id;  // "person_<id>" / "group_<id>", as in the bot log
};

struct ConversationTurn {
  ChatMessage message;
  util::TimePoint created_at;
};

// A round is a user message and every message after it up to the next user message (assistant
// replies, tool calls and tool results). Messages stored before the first user message of a
// conversation count as one round of their own.
//
// Implementations are thread-safe and may block: call them from the blocking pool. kInvalidArgument
// for a negative max_rounds or a session id not of the form above.
class ConversationRepository {
 public:
  virtual ~ConversationRepository() = default;
  // The turns of the newest `max_rounds` rounds, oldest first, from one consistent snapshot. An
  // unknown conversation, or max_rounds == 0, is empty.
  virtual util::Result<std::vector<ConversationTurn>> Load(const ConversationKey& key,
                                                           int max_rounds) = 0;
  // Appends `turns` in order and drops all but the newest `max_rounds` rounds, in one transaction:
  // on failure nothing was stored. kNotFound when the bot or the pipeline does not exist.
  virtual util::Result<void> Append(const ConversationKey& key,
                                    const std::vector<ConversationTurn>& turns, int max_rounds) = 0;
  // Several appends, in order, in one transaction where the storage allows; each item succeeds
  // or fails on its own (a failed one leaves the others stored). The default appends one by one.
  struct AppendItem {
    ConversationKey key;
    std::vector<ConversationTurn> turns;
    int max_rounds = 0;
  };
  virtual std::vector<util::Result<void>> AppendBatch(const std::vector<AppendItem>& items) {
    std::vector<util::Result<void>> out;
    out.reserve(items.size());
    for (const auto& item : items) out.push_back(Append(item.key, item.turns, item.max_rounds));
    return out;
  }
  // Forgets one conversation (`!reset`). Clearing an unknown conversation succeeds.
  virtual util::Result<void> Clear(const ConversationKey& key) = 0;
  // Forgets every conversation held through `pipeline`, of any bot.
  virtual util::Result<void> ClearPipeline(const util::PipelineId& pipeline) = 0;
  // Forgets every conversation of `bot`, through any pipeline. Deleting a bot or a pipeline from
  // storage also deletes its conversations.
  virtual util::Result<void> ClearBot(const util::BotId& bot) = 0;
};

}  // namespace sb::domain
