#include "storage/sql/conversation_repository.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using util::ErrorCode;

constexpr std::string_view kWhat = "conversation turn";

util::Result<void> CheckKey(const domain::ConversationKey& key) {
  const std::string_view id = key.session_id;
  for (std::string_view prefix : {"person_", "group_"}) {
    if (id.size() > prefix.size() && id.starts_with(prefix)) return util::Ok();
  }
  return util::Fail(
      ErrorCode::kInvalidArgument,
      fmt::format("session id '{}' is not person_<id> or group_<id>", id.substr(0, 64)));
}

util::Result<void> CheckRounds(int max_rounds) {
  if (max_rounds >= 0) return util::Ok();
  return util::Fail(ErrorCode::kInvalidArgument,
                    fmt::format("max rounds must not be negative, got {}", max_rounds));
}

util::Error Damaged(std::string_view why) {
  return util::Error{ErrorCode::kInternal, fmt::format("stored {} is damaged: {}", kWhat, why)};
}

// Wire-like names ("text", "image_url", "tool_calls") so a person reading the table recognizes it.
std::string EncodeMessage(const domain::ChatMessage& m) {
  util::JsonObject out;
  out["role"] = m.role;
  util::JsonArray content;
  content.reserve(m.content.size());
  for (const auto& part : m.content) {
    util::JsonObject p;
    if (part.kind == domain::ContentPart::Kind::kImage) {
      p["type"] = "image_url";
      p["image_url"] = part.image_url;
    } else {
      p["type"] = "text";
      p["text"] = part.text;
    }
    content.emplace_back(std::move(p));
  }
  out["content"] = std::move(content);
  if (!m.tool_calls.empty()) {
    util::JsonArray calls;
    calls.reserve(m.tool_calls.size());
    for (const auto& call : m.tool_calls) {
      calls.emplace_back(
          util::JsonObject{{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}});
    }
    out["tool_calls"] = std::move(calls);
  }
  if (!m.tool_call_id.empty()) out["tool_call_id"] = m.tool_call_id;
  return JsonToText(out);
}

// Reads the string member `key` into `out`; absent is fine unless `required`.
util::Result<void> ReadString(const util::JsonObject& o, std::string_view key, std::string& out,
                              bool required) {
  const util::Json* v = o.if_contains(key);
  if (v == nullptr) {
    if (!required) return util::Ok();
    return tl::make_unexpected(Damaged(fmt::format("'{}' is missing", key)));
  }
  if (!v->is_string())
    return tl::make_unexpected(Damaged(fmt::format("'{}' is not a string", key)));
  out = std::string(v->as_string());
  return util::Ok();
}

util::Result<const util::JsonArray*> ReadArray(const util::JsonObject& o, std::string_view key) {
  const util::Json* v = o.if_contains(key);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) return tl::make_unexpected(Damaged(fmt::format("'{}' is not an array", key)));
  return &v->as_array();
}

util::Result<domain::ChatMessage> DecodeMessage(std::string_view text) {
  auto obj = ObjectFromText(text, kWhat);
  if (!obj) return tl::make_unexpected(obj.error());
  domain::ChatMessage m;
  if (auto r = ReadString(*obj, "role", m.role, true); !r) return tl::make_unexpected(r.error());
  if (auto r = ReadString(*obj, "tool_call_id", m.tool_call_id, false); !r) {
    return tl::make_unexpected(r.error());
  }

  auto content = ReadArray(*obj, "content");
  if (!content) return tl::make_unexpected(content.error());
  if (*content != nullptr) {
    for (const auto& item : **content) {
      if (!item.is_object()) return tl::make_unexpected(Damaged("a content part is not an object"));
      const auto& p = item.as_object();
      std::string type;
      if (auto r = ReadString(p, "type", type, true); !r) return tl::make_unexpected(r.error());
      domain::ContentPart part;
      util::Result<void> read;
      if (type == "text") {
        read = ReadString(p, "text", part.text, true);
      } else if (type == "image_url") {
        part.kind = domain::ContentPart::Kind::kImage;
        read = ReadString(p, "image_url", part.image_url, true);
      } else {
        return tl::make_unexpected(Damaged(fmt::format("unknown content type '{}'", type)));
      }
      if (!read) return tl::make_unexpected(read.error());
      m.content.push_back(std::move(part));
    }
  }

  auto calls = ReadArray(*obj, "tool_calls");
  if (!calls) return tl::make_unexpected(calls.error());
  if (*calls != nullptr) {
    for (const auto& item : **calls) {
      if (!item.is_object()) return tl::make_unexpected(Damaged("a tool call is not an object"));
      const auto& c = item.as_object();
      domain::ToolCall call;
      for (auto [key, field] : {std::pair{"id", &call.id}, std::pair{"name", &call.name},
                                std::pair{"arguments", &call.arguments}}) {
        if (auto r = ReadString(c, key, *field, true); !r) return tl::make_unexpected(r.error());
      }
      m.tool_calls.push_back(std::move(call));
    }
  }
  return m;
}

util::Result<domain::ConversationTurn> ReadRow(const Statement& s) {
  auto message = DecodeMessage(s.Text(0));
  if (!message) return tl::make_unexpected(message.error());
  return domain::ConversationTurn{std::move(*message), TimeAt(s.Int64(1))};
}

util::Result<void> Forget(Connection& c, const domain::ConversationKey& key) {
  auto deleted = Execute(c,
                         "DELETE FROM conversations "
                         "WHERE pipeline_uuid = ? AND bot_uuid = ? AND session_id = ?",
                         key.pipeline.str(), key.bot.str(), key.session_id);
  if (!deleted) return tl::make_unexpected(deleted.error());
  return util::Ok();
}

// Where a conversation's numbering stands: the last seq and round given.
struct Counters {
  std::int64_t id = 0;
  std::int64_t last_seq = 0;
  std::int64_t last_round = 0;
};

// nullopt when the conversation does not exist yet.
util::Result<std::optional<Counters>> FindCounters(Connection& c,
                                                   const domain::ConversationKey& key) {
  auto stmt = Query(c,
                    "SELECT id, last_seq, last_round FROM conversations "
                    "WHERE pipeline_uuid = ? AND bot_uuid = ? AND session_id = ?",
                    key.pipeline.str(), key.bot.str(), key.session_id);
  if (!stmt) return tl::make_unexpected(stmt.error());
  auto row = stmt->Step();
  if (!row) return tl::make_unexpected(row.error());
  if (!*row) return std::optional<Counters>();
  return Counters{stmt->Int64(0), stmt->Int64(1), stmt->Int64(2)};
}

}  // namespace

util::Result<std::vector<domain::ConversationTurn>> SqlConversationRepository::Load(
    const domain::ConversationKey& key, int max_rounds) {
  if (auto r = CheckKey(key); !r) return tl::make_unexpected(r.error());
  if (auto r = CheckRounds(max_rounds); !r) return tl::make_unexpected(r.error());
  if (max_rounds == 0) return std::vector<domain::ConversationTurn>();
  return db_.Read([&](Connection& c) -> util::Result<std::vector<domain::ConversationTurn>> {
    auto stmt = Query(c,
                      "SELECT t.message, t.created_at FROM conversations c "
                      "JOIN conversation_turns t ON t.conversation_id = c.id "
                      "WHERE c.pipeline_uuid = ? AND c.bot_uuid = ? AND c.session_id = ? "
                      "AND t.round > c.last_round - ? ORDER BY t.seq",
                      key.pipeline.str(), key.bot.str(), key.session_id, max_rounds);
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::ConversationTurn>(*stmt, ReadRow);
  });
}

namespace {

// kNotFound naming whichever owner of `key` is gone (the bot first), or Ok when both exist.
util::Result<void> CheckOwners(Connection& c, const domain::ConversationKey& key) {
  auto bot = Exists(c, "SELECT 1 FROM bots WHERE uuid = ?", key.bot.str());
  if (!bot) return tl::make_unexpected(bot.error());
  if (!*bot) {
    return util::Fail(ErrorCode::kNotFound, fmt::format("bot {} not found", key.bot.str()));
  }
  auto pipeline = Exists(c, "SELECT 1 FROM pipelines WHERE uuid = ?", key.pipeline.str());
  if (!pipeline) return tl::make_unexpected(pipeline.error());
  if (!*pipeline) {
    return util::Fail(ErrorCode::kNotFound,
                      fmt::format("pipeline {} not found", key.pipeline.str()));
  }
  return util::Ok();
}

util::Result<void> Trim(Connection& c, const Counters& counters, int max_rounds) {
  // Rounds start at 0 (messages before the first user message), so below that nothing is stored.
  if (counters.last_round - max_rounds < 0) return util::Ok();
  auto trimmed =
      Execute(c, "DELETE FROM conversation_turns WHERE conversation_id = ? AND round <= ?",
              counters.id, counters.last_round - max_rounds);
  if (!trimmed) return tl::make_unexpected(trimmed.error());
  return util::Ok();
}

// How an append inside a shared transaction ended: a failure of the item alone (its bot or
// pipeline is gone; nothing of it was written) or of the transaction (roll everything back).
struct AppendOutcome {
  util::Result<void> item = util::Ok();
  util::Result<void> transaction = util::Ok();
};

// The remembered-round path, the one every reply takes: a single upsert both creates the
// conversation and reserves the seq and round numbers of the new turns, and the foreign keys
// stand in for existence checks. Four statements instead of eight.
AppendOutcome AppendTurns(Connection& c, const domain::ConversationKey& key,
                          const std::vector<domain::ConversationTurn>& turns,
                          const std::vector<std::string>& encoded, int max_rounds) {
  if (c.dialect() == Dialect::kPostgres) {
    // There a failed statement aborts the whole transaction (and the other items of a batch), so
    // the owners are checked first instead of letting the foreign keys tell.
    if (auto owners = CheckOwners(c, key); !owners) {
      if (owners.error().code == ErrorCode::kNotFound) return {.item = owners};
      return {.transaction = owners};
    }
  }
  const auto added_seqs = static_cast<std::int64_t>(turns.size());
  const auto added_rounds = static_cast<std::int64_t>(std::count_if(
      turns.begin(), turns.end(), [](const auto& t) { return t.message.role == "user"; }));
  auto upsert = Query(c,
                      "INSERT INTO conversations "
                      "(pipeline_uuid, bot_uuid, session_id, last_seq, last_round) "
                      "VALUES (?1, ?2, ?3, ?4, ?5) "
                      "ON CONFLICT (pipeline_uuid, bot_uuid, session_id) DO UPDATE SET "
                      "last_seq = conversations.last_seq + ?4, "
                      "last_round = conversations.last_round + ?5 "
                      "RETURNING id, last_seq, last_round",
                      key.pipeline.str(), key.bot.str(), key.session_id, added_seqs, added_rounds);
  if (!upsert) return {.transaction = tl::make_unexpected(upsert.error())};
  auto row = upsert->Step();
  if (!row && upsert->FailedOnForeignKey()) {
    // The statement alone was undone; say which owner is missing.
    auto owners = CheckOwners(c, key);
    if (!owners) return {.item = owners};
    return {.transaction = tl::make_unexpected(row.error())};
  }
  if (!row) return {.transaction = tl::make_unexpected(row.error())};
  if (!*row) return {.transaction = util::Fail(ErrorCode::kInternal, "upsert returned no row")};
  const Counters counters{upsert->Int64(0), upsert->Int64(1), upsert->Int64(2)};
  if (auto done = upsert->Run(); !done) return {.transaction = done};

  std::int64_t seq = counters.last_seq - added_seqs;
  std::int64_t round = counters.last_round - added_rounds;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    ++seq;
    if (turns[i].message.role == "user") ++round;
    auto inserted = Execute(c,
                            "INSERT INTO conversation_turns "
                            "(conversation_id, seq, round, message, created_at) "
                            "VALUES (?, ?, ?, ?, ?)",
                            counters.id, seq, round, encoded[i], Millis(turns[i].created_at));
    if (!inserted) return {.transaction = tl::make_unexpected(inserted.error())};
  }
  return {.transaction = Trim(c, counters, max_rounds)};
}

// One append inside the caller's transaction; `encoded` holds the turns' messages as stored.
AppendOutcome AppendIn(Connection& c, const domain::ConversationKey& key,
                       const std::vector<domain::ConversationTurn>& turns,
                       const std::vector<std::string>& encoded, int max_rounds) {
  if (max_rounds > 0 && !turns.empty()) return AppendTurns(c, key, turns, encoded, max_rounds);
  // Nothing to add (only a trim to a new limit) or nothing to keep: rare, checked in full.
  if (auto owners = CheckOwners(c, key); !owners) {
    if (owners.error().code == ErrorCode::kNotFound) return {.item = owners};
    return {.transaction = owners};
  }
  if (max_rounds == 0) return {.transaction = Forget(c, key)};
  auto found = FindCounters(c, key);
  if (!found) return {.transaction = tl::make_unexpected(found.error())};
  if (!*found) return {};  // nothing stored and nothing to add
  return {.transaction = Trim(c, **found, max_rounds)};
}

std::vector<std::string> EncodeTurns(const std::vector<domain::ConversationTurn>& turns) {
  std::vector<std::string> encoded;
  encoded.reserve(turns.size());
  for (const auto& turn : turns) encoded.push_back(EncodeMessage(turn.message));
  return encoded;
}

}  // namespace

util::Result<void> SqlConversationRepository::Append(
    const domain::ConversationKey& key, const std::vector<domain::ConversationTurn>& turns,
    int max_rounds) {
  if (auto r = CheckKey(key); !r) return tl::make_unexpected(r.error());
  if (auto r = CheckRounds(max_rounds); !r) return tl::make_unexpected(r.error());
  // Encoded before the transaction so the write lock is held only for the SQL.
  const auto encoded = EncodeTurns(turns);
  util::Result<void> item = util::Ok();
  auto written = db_.Write([&](Connection& c) -> util::Result<void> {
    auto outcome = AppendIn(c, key, turns, encoded, max_rounds);
    item = std::move(outcome.item);
    return outcome.transaction;
  });
  if (!written) return written;
  return item;
}

std::vector<util::Result<void>> SqlConversationRepository::AppendBatch(
    const std::vector<AppendItem>& items) {
  std::vector<util::Result<void>> out(items.size(), util::Ok());
  std::vector<std::vector<std::string>> encoded(items.size());
  std::vector<bool> valid(items.size(), false);
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (auto r = CheckKey(items[i].key); !r) {
      out[i] = r;
    } else if (auto rounds = CheckRounds(items[i].max_rounds); !rounds) {
      out[i] = rounds;
    } else {
      encoded[i] = EncodeTurns(items[i].turns);
      valid[i] = true;
    }
  }
  auto written = db_.Write([&](Connection& c) -> util::Result<void> {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!valid[i]) continue;
      // An item whose bot was deleted fails alone, having written nothing; any other failure
      // rolls the whole batch back.
      auto outcome = AppendIn(c, items[i].key, items[i].turns, encoded[i], items[i].max_rounds);
      if (!outcome.transaction) return outcome.transaction;
      out[i] = std::move(outcome.item);
    }
    return util::Ok();
  });
  if (!written) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (valid[i]) out[i] = tl::make_unexpected(written.error());
    }
  }
  return out;
}

util::Result<void> SqlConversationRepository::Clear(const domain::ConversationKey& key) {
  if (auto r = CheckKey(key); !r) return tl::make_unexpected(r.error());
  return db_.Write([&](Connection& c) { return Forget(c, key); });
}

util::Result<void> SqlConversationRepository::ClearPipeline(const util::PipelineId& pipeline) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto deleted = Execute(c, "DELETE FROM conversations WHERE pipeline_uuid = ?", pipeline.str());
    if (!deleted) return tl::make_unexpected(deleted.error());
    return util::Ok();
  });
}

util::Result<void> SqlConversationRepository::ClearBot(const util::BotId& bot) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto deleted = Execute(c, "DELETE FROM conversations WHERE bot_uuid = ?", bot.str());
    if (!deleted) return tl::make_unexpected(deleted.error());
    return util::Ok();
  });
}

}  // namespace sb::storage::sql
