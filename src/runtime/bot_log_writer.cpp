#include "runtime/bot_log_writer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace sb::runtime {

BotLogWriter::BotLogWriter(domain::BotLogRepository& repo, util::BlockingExecutor& blocking)
    : repo_(repo), blocking_(blocking) {}

void BotLogWriter::Append(const util::BotId& bot, int retention, domain::BotLogEntry entry) {
  bool start = false;
  {
    std::lock_guard lock(mu_);
    pending_.push_back({bot, retention, std::move(entry)});
    if (!draining_) start = draining_ = true;
  }
  if (start) blocking_.PostAfter(kCommitInterval, [this] { Drain(); });
}

void BotLogWriter::Drain() {
  StoreQueued();
  {
    std::lock_guard lock(mu_);
    if (pending_.empty()) {
      draining_ = false;
      return;
    }
  }
  // What arrived meanwhile waits for the next commit: one transaction per interval, however
  // many messages a second the bots handle.
  blocking_.PostAfter(kCommitInterval, [this] { Drain(); });
}

void BotLogWriter::Commit() { StoreQueued(); }

void BotLogWriter::StoreQueued() {
  std::lock_guard store(store_mu_);
  std::deque<Item> items;
  {
    std::lock_guard lock(mu_);
    items.swap(pending_);
  }
  Store(items);
}

std::size_t BotLogWriter::Pending() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

void BotLogWriter::Store(std::deque<Item>& items) {
  // Batches bound the transaction (and the time the write lock is held) under a flood.
  constexpr std::size_t kBatch = 512;
  std::vector<domain::BotLogRepository::BatchItem> batch;
  batch.reserve(std::min(items.size(), kBatch));
  auto flush = [&] {
    if (batch.empty()) return;
    if (auto stored = repo_.AppendBatch(batch); !stored) {
      spdlog::warn("could not store {} bot log entries: {}", batch.size(), stored.error().message);
    }
    batch.clear();
  };
  for (auto& item : items) {
    batch.push_back({item.bot, std::move(item.entry), item.retention});
    if (batch.size() == kBatch) flush();
  }
  flush();
}

}  // namespace sb::runtime
