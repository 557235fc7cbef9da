// Conversation memory for the message path: the recent sessions' rounds are kept in memory, so
// a turn reads no database, and appends reach the database behind the reply, many per
// transaction. A session's next turn always sees its previous one (it reads the memory copy,
// which is updated before Append returns). Clears go through at once, after the writes queued
// before them. What a crash can lose: the appends not yet written, those of about the last
// kCommitInterval, never a clear. The copies are bounded by count and by bytes, the least
// recently used dropped first; a dropped session is read from the database on its next turn.
//   WriteBehindConversations memory(storage.conversations(), blocking, {.max_bytes = 32 << 20});
//   LocalAgentRunner runner(gateway, models, memory, blocking, clock);
//   ...
//   memory.Flush();  // at shutdown, after the pools are joined
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "domain/conversation.hpp"
#include "util/blocking_executor.hpp"

namespace sb::runtime {

struct ConversationCacheLimits {
  std::size_t max_sessions = 20'000;
  // The approximate memory of the cached copies (message text, tool calls, image URLs and the
  // bookkeeping around them). Copies with writes still queued are kept beyond it until written.
  std::size_t max_bytes = 32 * 1024 * 1024;
};

class WriteBehindConversations final : public domain::ConversationRepository {
 public:
  // Appends are committed together at most this often.
  static constexpr std::chrono::milliseconds kCommitInterval{20};

  WriteBehindConversations(domain::ConversationRepository& backing,
                           util::BlockingExecutor& blocking, ConversationCacheLimits limits = {});

  util::Result<std::vector<domain::ConversationTurn>> Load(const domain::ConversationKey& key,
                                                           int max_rounds) override;
  // Updates the memory copy and queues the write; fails only for bad arguments. A write the
  // database refuses later (the bot was deleted meanwhile) is dropped with a warning.
  util::Result<void> Append(const domain::ConversationKey& key,
                            const std::vector<domain::ConversationTurn>& turns,
                            int max_rounds) override;
  util::Result<void> Clear(const domain::ConversationKey& key) override;
  util::Result<void> ClearPipeline(const util::PipelineId& pipeline) override;
  util::Result<void> ClearBot(const util::BotId& bot) override;

  // Writes everything queued, on the calling thread. Blocking.
  void Flush();

  std::size_t Pending() const;
  // What the cached copies take now, by the measure of ConversationCacheLimits::max_bytes.
  std::size_t CachedBytes() const;
  std::size_t CachedSessions() const;

 private:
  struct Turn {
    domain::ConversationTurn turn;
    std::int64_t round = 0;
  };
  struct Entry {
    domain::ConversationKey key;
    std::vector<Turn> turns;       // oldest first
    std::int64_t last_round = 0;   // numbering of this copy only
    int known_rounds = 0;          // the newest rounds this copy holds completely
    int pending = 0;               // queued writes not yet stored; such entries stay cached
    std::uint64_t generation = 0;  // tells a recreated entry from the one a write was for
    std::size_t bytes = 0;         // of this entry, counted in bytes_
    std::list<std::string>::iterator recency;
  };
  struct Write {
    std::string key;
    std::uint64_t generation = 0;
    domain::ConversationRepository::AppendItem item;
  };

  static std::string KeyOf(const domain::ConversationKey& key);
  Entry& Touch(const std::string& k, const domain::ConversationKey& key);  // mu_ held
  void Trim(Entry& entry, int max_rounds);                                 // mu_ held
  void EvictLocked();
  // Recounts `entry` after its turns changed; mu_ held.
  void Resize(const std::string& k, Entry& entry);
  // Drops a cached copy; mu_ held.
  std::map<std::string, Entry>::iterator EraseLocked(std::map<std::string, Entry>::iterator it);
  void Drain();
  void Store(std::deque<Write>& writes);
  // Stores what is queued, then drops the cached copies `match` selects and runs `wipe` on the
  // database, holding the writer lock throughout so no write slips in between.
  template <typename Match, typename Wipe>
  util::Result<void> ClearWhere(Match match, Wipe wipe);

  domain::ConversationRepository& backing_;
  util::BlockingExecutor& blocking_;
  const std::size_t max_cached_;
  const std::size_t max_bytes_;

  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
  std::size_t bytes_ = 0;           // sum of the entries' bytes
  std::list<std::string> recency_;  // most recently used first
  std::deque<Write> queue_;
  bool draining_ = false;
  std::uint64_t generation_ = 0;

  std::mutex store_mu_;  // one writer at a time, so queued writes keep their order
};

}  // namespace sb::runtime
