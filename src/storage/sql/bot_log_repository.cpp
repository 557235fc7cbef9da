#include "storage/sql/bot_log_repository.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using util::ErrorCode;

domain::LogLevel LevelFromText(std::string_view text) {
  for (auto level : {domain::LogLevel::kDebug, domain::LogLevel::kInfo, domain::LogLevel::kWarning,
                     domain::LogLevel::kError}) {
    if (text == domain::LogLevelName(level)) return level;
  }
  // Only this code writes the column; an unknown name is not worth failing a whole page over.
  return domain::LogLevel::kInfo;
}

util::Result<domain::BotLogEntry> ReadRow(const Statement& s) {
  domain::BotLogEntry e;
  e.seq_id = s.Int64(0);
  e.timestamp = TimeAt(s.Int64(1));
  e.level = LevelFromText(s.Text(2));
  e.text = s.Text(3);
  auto images = StringListFromText(s.Text(4), "bot log images");
  if (!images) return tl::make_unexpected(images.error());
  e.images = std::move(*images);
  e.message_session_id = s.Text(5);
  return e;
}

}  // namespace

namespace {

// Inserts one entry inside the caller's transaction; kNotFound when the bot does not exist.
util::Result<std::int64_t> AppendIn(Connection& c, const util::BotId& bot,
                                    const domain::BotLogEntry& entry, int retention) {
  auto exists = Exists(c, "SELECT 1 FROM bots WHERE uuid = ?", bot.str());
  if (!exists) return tl::make_unexpected(exists.error());
  if (!*exists) {
    return util::Fail(ErrorCode::kNotFound, fmt::format("bot {} not found", bot.str()));
  }
  auto seq =
      QueryInt(c,
               "INSERT INTO bot_log_sequences (bot_uuid, last_seq) VALUES (?, 1) "
               "ON CONFLICT (bot_uuid) DO UPDATE SET last_seq = bot_log_sequences.last_seq + 1 "
               "RETURNING last_seq",
               bot.str());
  if (!seq) return tl::make_unexpected(seq.error());
  auto inserted =
      Execute(c,
              "INSERT INTO bot_logs (bot_uuid, seq_id, timestamp, level, text, "
              "images, message_session_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
              bot.str(), *seq, Millis(entry.timestamp), domain::LogLevelName(entry.level),
              entry.text, StringListToText(entry.images), entry.message_session_id);
  if (!inserted) return tl::make_unexpected(inserted.error());
  // seq_ids of one bot are dense, so "newest `retention` kept" is a range delete on the key.
  auto dropped = Execute(c, "DELETE FROM bot_logs WHERE bot_uuid = ? AND seq_id <= ?", bot.str(),
                         *seq - retention);
  if (!dropped) return tl::make_unexpected(dropped.error());
  return *seq;
}

util::Result<void> CheckRetention(int retention) {
  if (retention < 1) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("log retention must be at least 1, got {}", retention));
  }
  return util::Ok();
}

}  // namespace

util::Result<std::int64_t> SqlBotLogRepository::Append(const util::BotId& bot,
                                                       const domain::BotLogEntry& entry,
                                                       int retention) {
  if (auto ok = CheckRetention(retention); !ok) return tl::unexpected(ok.error());
  return db_.Write([&](Connection& c) -> util::Result<std::int64_t> {
    return AppendIn(c, bot, entry, retention);
  });
}

util::Result<void> SqlBotLogRepository::AppendBatch(const std::vector<BatchItem>& items) {
  for (const auto& item : items) {
    if (auto ok = CheckRetention(item.retention); !ok) return ok;
  }
  if (items.empty()) return util::Ok();
  // Per bot, in order: one existence check, one sequence step of n, n inserts and one trim,
  // instead of four statements per entry.
  std::map<std::string, std::vector<const BatchItem*>> by_bot;
  for (const auto& item : items) by_bot[item.bot.str()].push_back(&item);
  return db_.Write([&](Connection& c) -> util::Result<void> {
    for (const auto& [bot, entries] : by_bot) {
      auto exists = Exists(c, "SELECT 1 FROM bots WHERE uuid = ?", bot);
      if (!exists) return tl::make_unexpected(exists.error());
      if (!*exists) continue;  // deleted meanwhile: its log went with it
      const auto n = static_cast<std::int64_t>(entries.size());
      auto last = QueryInt(c,
                           "INSERT INTO bot_log_sequences (bot_uuid, last_seq) VALUES (?, ?) "
                           "ON CONFLICT (bot_uuid) DO UPDATE SET "
                           "last_seq = bot_log_sequences.last_seq + ? "
                           "RETURNING last_seq",
                           bot, n, n);
      if (!last) return tl::make_unexpected(last.error());
      std::int64_t seq = *last - n;
      for (const BatchItem* item : entries) {
        const auto& e = item->entry;
        auto inserted = Execute(c,
                                "INSERT INTO bot_logs (bot_uuid, seq_id, timestamp, level, text, "
                                "images, message_session_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                bot, ++seq, Millis(e.timestamp), domain::LogLevelName(e.level),
                                e.text, StringListToText(e.images), e.message_session_id);
        if (!inserted) return tl::make_unexpected(inserted.error());
      }
      auto dropped = Execute(c, "DELETE FROM bot_logs WHERE bot_uuid = ? AND seq_id <= ?", bot,
                             *last - entries.back()->retention);
      if (!dropped) return tl::make_unexpected(dropped.error());
    }
    return util::Ok();
  });
}

util::Result<domain::BotLogPage> SqlBotLogRepository::Page(const util::BotId& bot,
                                                           std::int64_t from_index, int max_count) {
  const std::int64_t upto = from_index < 0 ? std::numeric_limits<std::int64_t>::max() : from_index;
  return db_.Read([&](Connection& c) -> util::Result<domain::BotLogPage> {
    domain::BotLogPage page;
    auto total = QueryInt(c, "SELECT COUNT(*) FROM bot_logs WHERE bot_uuid = ?", bot.str());
    if (!total) return tl::make_unexpected(total.error());
    page.total_count = *total;
    if (max_count <= 0) return page;
    auto stmt = Query(c,
                      "SELECT seq_id, timestamp, level, text, images, message_session_id "
                      "FROM bot_logs WHERE bot_uuid = ? AND seq_id <= ? "
                      "ORDER BY seq_id DESC LIMIT ?",
                      bot.str(), upto, max_count);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto entries = CollectRows<domain::BotLogEntry>(*stmt, ReadRow);
    if (!entries) return tl::make_unexpected(entries.error());
    // Read newest first so LIMIT keeps the newest; the contract returns them oldest first.
    std::reverse(entries->begin(), entries->end());
    page.entries = std::move(*entries);
    return page;
  });
}

}  // namespace sb::storage::sql
