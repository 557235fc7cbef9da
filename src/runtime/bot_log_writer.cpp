#include "runtime/bot_log_writer.hpp"

#include <spdlog/spdlog.h>

#include <utility>

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
  if (start) blocking_.Post([this] { Drain(); });
}

void BotLogWriter::Drain() {
  for (;;) {
    std::deque<Item> items;
    {
      std::lock_guard lock(mu_);
      if (pending_.empty()) {
        draining_ = false;
        return;
      }
      items.swap(pending_);
    }
    Store(items);
  }
}

void BotLogWriter::Flush() {
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
  for (const auto& item : items) {
    auto stored = repo_.Append(item.bot, item.entry, item.retention);
    if (!stored && stored.error().code != util::ErrorCode::kNotFound) {
      spdlog::warn("bot {}: could not store a log entry: {}", item.bot.str(),
                   stored.error().message);
    }
  }
}

}  // namespace sb::runtime
