#include "runtime/write_behind_conversations.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace sb::runtime {

namespace {

// What a cached turn costs, roughly: its strings' characters plus the objects holding them.
std::size_t TurnBytes(const domain::ConversationTurn& turn) {
  const auto& m = turn.message;
  std::size_t n = sizeof(domain::ConversationTurn) + sizeof(std::int64_t) + m.role.size() +
                  m.tool_call_id.size();
  for (const auto& part : m.content) {
    n += sizeof(part) + part.text.size() + part.image_url.size();
  }
  for (const auto& call : m.tool_calls) {
    n += sizeof(call) + call.id.size() + call.name.size() + call.arguments.size();
  }
  return n;
}

int UserTurns(const std::vector<domain::ConversationTurn>& turns) {
  return static_cast<int>(std::count_if(turns.begin(), turns.end(),
                                        [](const auto& t) { return t.message.role == "user"; }));
}

}  // namespace

WriteBehindConversations::WriteBehindConversations(domain::ConversationRepository& backing,
                                                   util::BlockingExecutor& blocking,
                                                   ConversationCacheLimits limits)
    : backing_(backing),
      blocking_(blocking),
      max_cached_(std::max<std::size_t>(1, limits.max_sessions)),
      max_bytes_(limits.max_bytes) {}

std::string WriteBehindConversations::KeyOf(const domain::ConversationKey& key) {
  return key.pipeline.str() + "\n" + key.bot.str() + "\n" + key.session_id;
}

WriteBehindConversations::Entry& WriteBehindConversations::Touch(
    const std::string& k, const domain::ConversationKey& key) {
  auto it = entries_.find(k);
  if (it == entries_.end()) {
    recency_.push_front(k);
    Entry entry;
    entry.key = key;
    entry.generation = ++generation_;
    entry.recency = recency_.begin();
    it = entries_.emplace(k, std::move(entry)).first;
    Resize(k, it->second);
  } else {
    recency_.splice(recency_.begin(), recency_, it->second.recency);
  }
  return it->second;
}

void WriteBehindConversations::Resize(const std::string& k, Entry& entry) {
  // The key is held twice (map and recency list) besides the entry itself.
  std::size_t n = sizeof(Entry) + 2 * k.size() + entry.key.session_id.size() + 64;
  for (const auto& t : entry.turns) n += TurnBytes(t.turn);
  bytes_ = bytes_ - entry.bytes + n;
  entry.bytes = n;
}

std::map<std::string, WriteBehindConversations::Entry>::iterator
WriteBehindConversations::EraseLocked(std::map<std::string, Entry>::iterator it) {
  bytes_ -= it->second.bytes;
  recency_.erase(it->second.recency);
  return entries_.erase(it);
}

void WriteBehindConversations::Trim(Entry& entry, int max_rounds) {
  const std::int64_t keep_after = entry.last_round - max_rounds;
  entry.turns.erase(std::remove_if(entry.turns.begin(), entry.turns.end(),
                                   [&](const Turn& t) { return t.round <= keep_after; }),
                    entry.turns.end());
  entry.known_rounds = std::min(entry.known_rounds, max_rounds);
}

void WriteBehindConversations::EvictLocked() {
  // The least recently used first; a copy with writes still queued stays (the database does not
  // hold its newest turns yet).
  auto it = recency_.end();
  while ((entries_.size() > max_cached_ || bytes_ > max_bytes_) && it != recency_.begin()) {
    --it;
    auto entry = entries_.find(*it);
    if (entry->second.pending > 0) continue;
    ++it;  // stays valid: EraseLocked removes the element before it
    EraseLocked(entry);
  }
}

util::Result<std::vector<domain::ConversationTurn>> WriteBehindConversations::Load(
    const domain::ConversationKey& key, int max_rounds) {
  if (max_rounds < 0) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "max rounds must not be negative");
  }
  const std::string k = KeyOf(key);
  bool flush_first = false;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(k);
    if (max_rounds == 0) return std::vector<domain::ConversationTurn>();
    if (it != entries_.end()) {
      Entry& entry = Touch(k, key);
      if (max_rounds <= entry.known_rounds) {
        std::vector<domain::ConversationTurn> out;
        for (const auto& t : entry.turns) {
          if (t.round > entry.last_round - max_rounds) out.push_back(t.turn);
        }
        return out;
      }
      flush_first = entry.pending > 0;  // more rounds wanted than the copy holds
    }
  }
  if (flush_first) Flush();
  auto loaded = backing_.Load(key, max_rounds);
  if (!loaded) return loaded;
  std::lock_guard lock(mu_);
  Entry& entry = Touch(k, key);
  if (entry.pending == 0) {
    // The database's copy is the whole truth for these rounds: keep it for the next turn.
    entry.turns.clear();
    entry.last_round = 0;
    for (const auto& turn : *loaded) {
      if (turn.message.role == "user") ++entry.last_round;
      entry.turns.push_back({turn, entry.last_round});
    }
    entry.known_rounds = max_rounds;
    Resize(k, entry);
  }
  EvictLocked();
  return loaded;
}

util::Result<void> WriteBehindConversations::Append(
    const domain::ConversationKey& key, const std::vector<domain::ConversationTurn>& turns,
    int max_rounds) {
  if (max_rounds < 0) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "max rounds must not be negative");
  }
  const std::string k = KeyOf(key);
  bool start = false;
  {
    std::lock_guard lock(mu_);
    Entry& entry = Touch(k, key);
    if (max_rounds == 0) {
      entry.turns.clear();
      entry.known_rounds = 0;
    } else {
      for (const auto& turn : turns) {
        if (turn.message.role == "user") ++entry.last_round;
        entry.turns.push_back({turn, entry.last_round});
      }
      entry.known_rounds += UserTurns(turns);
      Trim(entry, max_rounds);
    }
    Resize(k, entry);
    ++entry.pending;
    queue_.push_back({k, entry.generation, {key, turns, max_rounds}});
    if (!draining_) start = draining_ = true;
    EvictLocked();
  }
  if (start) blocking_.PostAfter(kCommitInterval, [this] { Drain(); });
  return util::Ok();
}

void WriteBehindConversations::Drain() {
  {
    std::lock_guard store(store_mu_);
    std::deque<Write> writes;
    {
      std::lock_guard lock(mu_);
      writes.swap(queue_);
    }
    Store(writes);
  }
  {
    std::lock_guard lock(mu_);
    if (queue_.empty()) {
      draining_ = false;
      return;
    }
  }
  // One transaction per interval: what arrived meanwhile waits for the next one.
  blocking_.PostAfter(kCommitInterval, [this] { Drain(); });
}

void WriteBehindConversations::Flush() {
  std::lock_guard store(store_mu_);
  std::deque<Write> writes;
  {
    std::lock_guard lock(mu_);
    writes.swap(queue_);
  }
  Store(writes);
}

void WriteBehindConversations::Store(std::deque<Write>& writes) {
  if (writes.empty()) return;
  std::vector<domain::ConversationRepository::AppendItem> items;
  items.reserve(writes.size());
  for (auto& w : writes) items.push_back(std::move(w.item));
  auto results = backing_.AppendBatch(items);
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i] && results[i].error().code != util::ErrorCode::kNotFound) {
      spdlog::warn("conversation memory not stored: {}", results[i].error().message);
    }
  }
  std::lock_guard lock(mu_);
  for (const auto& w : writes) {
    auto it = entries_.find(w.key);
    if (it != entries_.end() && it->second.generation == w.generation && it->second.pending > 0) {
      --it->second.pending;
    }
  }
  EvictLocked();
}

template <typename Match, typename Wipe>
util::Result<void> WriteBehindConversations::ClearWhere(Match match, Wipe wipe) {
  std::lock_guard store(store_mu_);
  std::deque<Write> writes;
  {
    // Taking the queue and dropping the copies together: an append that comes after starts a
    // fresh copy whose older rounds are read from the database once this clear is done.
    std::lock_guard lock(mu_);
    writes.swap(queue_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (match(it->second.key)) {
        it = EraseLocked(it);
      } else {
        ++it;
      }
    }
  }
  Store(writes);
  return wipe();
}

util::Result<void> WriteBehindConversations::Clear(const domain::ConversationKey& key) {
  const std::string k = KeyOf(key);
  return ClearWhere([&](const domain::ConversationKey& cached) { return KeyOf(cached) == k; },
                    [&] { return backing_.Clear(key); });
}

util::Result<void> WriteBehindConversations::ClearPipeline(const util::PipelineId& pipeline) {
  return ClearWhere(
      [&](const domain::ConversationKey& cached) { return cached.pipeline == pipeline; },
      [&] { return backing_.ClearPipeline(pipeline); });
}

util::Result<void> WriteBehindConversations::ClearBot(const util::BotId& bot) {
  return ClearWhere([&](const domain::ConversationKey& cached) { return cached.bot == bot; },
                    [&] { return backing_.ClearBot(bot); });
}

std::size_t WriteBehindConversations::Pending() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

std::size_t WriteBehindConversations::CachedBytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

std::size_t WriteBehindConversations::CachedSessions() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace sb::runtime
