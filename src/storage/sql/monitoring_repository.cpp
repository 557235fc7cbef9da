#include "storage/sql/monitoring_repository.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "storage/sql/monitoring_rollup.hpp"
#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using domain::MonitoringFilter;
using domain::MonitoringTable;

enum class Kind { kText, kInt, kReal, kBool, kTime };

struct Column {
  std::string_view name;
  Kind kind;
};

// One table as the queries see it: its columns in SELECT order, the column that orders and
// ranges it, and whether it can be filtered by bot and pipeline.
struct TableSpec {
  std::string_view name;
  std::string_view time_column;
  bool has_bot;
  std::vector<Column> columns;
};

const TableSpec& SpecOf(MonitoringTable table) {
  using K = Kind;
  static const TableSpec kMessages{"monitoring_messages",
                                   "timestamp",
                                   true,
                                   {{"id", K::kText},
                                    {"timestamp", K::kTime},
                                    {"bot_id", K::kText},
                                    {"bot_name", K::kText},
                                    {"pipeline_id", K::kText},
                                    {"pipeline_name", K::kText},
                                    {"message_content", K::kText},
                                    {"session_id", K::kText},
                                    {"status", K::kText},
                                    {"level", K::kText},
                                    {"platform", K::kText},
                                    {"user_id", K::kText},
                                    {"user_name", K::kText},
                                    {"runner_name", K::kText},
                                    {"variables", K::kText},
                                    {"role", K::kText}}};
  static const TableSpec kLlm{"monitoring_llm_calls",
                              "timestamp",
                              true,
                              {{"id", K::kText},
                               {"timestamp", K::kTime},
                               {"model_name", K::kText},
                               {"input_tokens", K::kInt},
                               {"output_tokens", K::kInt},
                               {"total_tokens", K::kInt},
                               {"duration", K::kInt},
                               {"cost", K::kReal},
                               {"status", K::kText},
                               {"bot_id", K::kText},
                               {"bot_name", K::kText},
                               {"pipeline_id", K::kText},
                               {"pipeline_name", K::kText},
                               {"session_id", K::kText},
                               {"error_message", K::kText},
                               {"message_id", K::kText}}};
  static const TableSpec kEmbedding{"monitoring_embedding_calls",
                                    "timestamp",
                                    false,
                                    {{"id", K::kText},
                                     {"timestamp", K::kTime},
                                     {"model_name", K::kText},
                                     {"prompt_tokens", K::kInt},
                                     {"total_tokens", K::kInt},
                                     {"duration", K::kInt},
                                     {"input_count", K::kInt},
                                     {"status", K::kText},
                                     {"error_message", K::kText},
                                     {"knowledge_base_id", K::kText},
                                     {"query_text", K::kText},
                                     {"session_id", K::kText},
                                     {"message_id", K::kText},
                                     {"call_type", K::kText}}};
  static const TableSpec kSessions{"monitoring_sessions",
                                   "start_time",
                                   true,
                                   {{"session_id", K::kText},
                                    {"bot_id", K::kText},
                                    {"bot_name", K::kText},
                                    {"pipeline_id", K::kText},
                                    {"pipeline_name", K::kText},
                                    {"message_count", K::kInt},
                                    {"start_time", K::kTime},
                                    {"last_activity", K::kTime},
                                    {"is_active", K::kBool},
                                    {"platform", K::kText},
                                    {"user_id", K::kText},
                                    {"user_name", K::kText}}};
  static const TableSpec kErrors{"monitoring_errors",
                                 "timestamp",
                                 true,
                                 {{"id", K::kText},
                                  {"timestamp", K::kTime},
                                  {"error_type", K::kText},
                                  {"error_message", K::kText},
                                  {"bot_id", K::kText},
                                  {"bot_name", K::kText},
                                  {"pipeline_id", K::kText},
                                  {"pipeline_name", K::kText},
                                  {"session_id", K::kText},
                                  {"stack_trace", K::kText},
                                  {"message_id", K::kText}}};
  static const TableSpec kFeedback{"monitoring_feedback",
                                   "timestamp",
                                   true,
                                   {{"id", K::kText},
                                    {"timestamp", K::kTime},
                                    {"feedback_id", K::kText},
                                    {"feedback_type", K::kInt},
                                    {"feedback_content", K::kText},
                                    {"inaccurate_reasons", K::kText},
                                    {"bot_id", K::kText},
                                    {"bot_name", K::kText},
                                    {"pipeline_id", K::kText},
                                    {"pipeline_name", K::kText},
                                    {"session_id", K::kText},
                                    {"message_id", K::kText},
                                    {"stream_id", K::kText},
                                    {"user_id", K::kText},
                                    {"platform", K::kText}}};
  switch (table) {
    case MonitoringTable::kMessages:
      return kMessages;
    case MonitoringTable::kLlmCalls:
      return kLlm;
    case MonitoringTable::kEmbeddingCalls:
      return kEmbedding;
    case MonitoringTable::kSessions:
      return kSessions;
    case MonitoringTable::kErrors:
      return kErrors;
    case MonitoringTable::kFeedback:
      return kFeedback;
  }
  return kMessages;
}

// LangBot stores naive UTC datetimes and serializes them with isoformat().
std::string IsoTime(std::int64_t ms) {
  std::string s = util::FormatRfc3339(util::FromUnixMillis(ms));
  if (!s.empty() && s.back() == 'Z') s.pop_back();
  return s;
}

std::string SelectList(const TableSpec& spec) {
  std::string out;
  for (const auto& c : spec.columns) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

util::JsonObject ReadRow(const TableSpec& spec, const Statement& s) {
  util::JsonObject row;
  for (int i = 0; i < static_cast<int>(spec.columns.size()); ++i) {
    const Column& c = spec.columns[static_cast<std::size_t>(i)];
    if (s.IsNull(i)) {
      row[c.name] = nullptr;
      continue;
    }
    switch (c.kind) {
      case Kind::kText:
        row[c.name] = s.Text(i);
        break;
      case Kind::kInt:
        row[c.name] = s.Int64(i);
        break;
      case Kind::kReal:
        row[c.name] = s.Double(i);
        break;
      case Kind::kBool:
        row[c.name] = s.Int64(i) != 0;
        break;
      case Kind::kTime:
        row[c.name] = IsoTime(s.Int64(i));
        break;
    }
  }
  return row;
}

// A WHERE clause and its parameters, bound in order.
struct Where {
  std::string sql;
  std::vector<std::string> texts;  // bound as text, then `ints` after them
  std::vector<std::int64_t> ints;
  // Parameters in clause order: true = next text, false = next int.
  std::vector<bool> order;

  void Add(const std::string& clause) {
    sql += sql.empty() ? " WHERE " + clause : " AND " + clause;
  }
  void In(std::string_view column, const std::vector<std::string>& values) {
    if (values.empty()) return;
    std::string clause = std::string(column) + " IN (";
    for (std::size_t i = 0; i < values.size(); ++i) {
      clause += i ? ",?" : "?";
      texts.push_back(values[i]);
      order.push_back(true);
    }
    Add(clause + ")");
  }
  void Int(const std::string& clause, std::int64_t v) {
    ints.push_back(v);
    order.push_back(false);
    Add(clause);
  }
  void Text(const std::string& clause, const std::string& v) {
    texts.push_back(v);
    order.push_back(true);
    Add(clause);
  }
  void BindTo(Statement& s, int& index) const {
    std::size_t t = 0, n = 0;
    for (bool is_text : order) {
      if (is_text) {
        s.Bind(index++, texts[t++]);
      } else {
        s.Bind(index++, ints[n++]);
      }
    }
  }
};

Where WhereOf(const TableSpec& spec, const MonitoringFilter& f, MonitoringTable table) {
  Where w;
  if (spec.has_bot) {
    w.In("bot_id", f.bot_ids);
    w.In("pipeline_id", f.pipeline_ids);
  }
  if (table == MonitoringTable::kMessages) w.In("session_id", f.session_ids);
  const std::string time(spec.time_column);
  if (f.start_ms) w.Int(time + " >= ?", *f.start_ms);
  if (f.end_ms) w.Int(time + " <= ?", *f.end_ms);
  if (table == MonitoringTable::kSessions && f.is_active) {
    w.Int("is_active = ?", *f.is_active ? 1 : 0);
  }
  if (table == MonitoringTable::kFeedback && f.feedback_type) {
    w.Int("feedback_type = ?", *f.feedback_type);
  }
  if (table == MonitoringTable::kEmbeddingCalls && f.knowledge_base) {
    w.Text("knowledge_base_id = ?", *f.knowledge_base);
  }
  return w;
}

util::Result<std::int64_t> Count(Connection& c, std::string_view table, const Where& w,
                                 const std::string& extra = {}) {
  std::string sql = fmt::format("SELECT COUNT(*) FROM {}{}", table, w.sql);
  if (!extra.empty()) sql += (w.sql.empty() ? " WHERE " : " AND ") + extra;
  auto stmt = c.Prepare(sql);
  if (!stmt) return tl::make_unexpected(stmt.error());
  int index = 1;
  w.BindTo(*stmt, index);
  auto row = stmt->Step();
  if (!row) return tl::make_unexpected(row.error());
  return *row ? stmt->Int64(0) : 0;
}

std::optional<std::string> Opt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

// Per batch, one rollup upsert per (table, hour, bot, pipeline) and one session upsert per
// (session, bot), not one per record: the writer's cost per message is mostly statements.
struct BatchTotals {
  std::map<std::tuple<std::string, std::int64_t, std::string, std::string>,
           std::pair<std::int64_t, std::int64_t>>
      hourly;
  struct Session {
    const domain::MonitoredMessage* first = nullptr;
    std::int64_t n = 0, start = 0, last = 0;
  };
  std::map<std::pair<std::string, std::string>, Session> sessions;

  void Add(std::string_view kind, std::int64_t ms, const std::string& bot,
           const std::string& pipeline, std::int64_t n, std::int64_t success) {
    auto& slot = hourly[{std::string(kind), ms / kRollupHourMs, bot, pipeline}];
    slot.first += n;
    slot.second += success;
  }
};

util::Result<void> WriteIn(Connection& c, const domain::MonitoringBatch& b) {
  BatchTotals totals;
  for (const auto& m : b.messages) {
    const auto& x = m.context;
    auto r = Execute(c,
                     "INSERT INTO monitoring_messages (id, timestamp, bot_id, bot_name, "
                     "pipeline_id, pipeline_name, message_content, session_id, status, level, "
                     "platform, user_id, user_name, runner_name, role) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                     m.id, Millis(m.timestamp), x.bot_id, x.bot_name, x.pipeline_id,
                     x.pipeline_name, m.message_content, x.session_id, m.status, m.level,
                     Opt(m.platform), Opt(m.user_id), Opt(m.user_name), Opt(m.runner_name), m.role);
    if (!r) return tl::make_unexpected(r.error());
    if (*r == 0) continue;  // written before (same id): counted once
    const std::int64_t ms = Millis(m.timestamp);
    totals.Add("messages", ms, x.bot_id, x.pipeline_id, 1, m.status == "success" ? 1 : 0);
    if (m.role != "user" || x.session_id.empty()) continue;
    auto& session = totals.sessions[{x.session_id, x.bot_id}];
    if (!session.first) {
      session.first = &m;
      session.start = session.last = ms;
    }
    ++session.n;
    session.start = std::min(session.start, ms);
    session.last = std::max(session.last, ms);
  }
  for (const auto& [key, session] : totals.sessions) {
    const auto& m = *session.first;
    const auto& x = m.context;
    auto s =
        Execute(c,
                "INSERT INTO monitoring_sessions (session_id, bot_id, bot_name, pipeline_id, "
                "pipeline_name, message_count, start_time, last_activity, is_active, "
                "platform, user_id, user_name) VALUES (?,?,?,?,?,?,?,?,1,?,?,?) "
                "ON CONFLICT (session_id, bot_id) DO UPDATE SET "
                "message_count = monitoring_sessions.message_count + excluded.message_count, "
                "last_activity = CASE WHEN excluded.last_activity > "
                "monitoring_sessions.last_activity THEN excluded.last_activity "
                "ELSE monitoring_sessions.last_activity END, "
                "bot_name = excluded.bot_name, pipeline_id = excluded.pipeline_id, "
                "pipeline_name = excluded.pipeline_name, is_active = 1",
                x.session_id, x.bot_id, x.bot_name, x.pipeline_id, x.pipeline_name, session.n,
                session.start, session.last, Opt(m.platform), Opt(m.user_id), Opt(m.user_name));
    if (!s) return tl::make_unexpected(s.error());
  }
  for (const auto& u : b.status_changes) {
    // The rollup's success count follows the status: read the record's hour and owner first.
    auto old = Query(c,
                     "SELECT timestamp, bot_id, pipeline_id, status FROM monitoring_messages "
                     "WHERE id = ?",
                     u.id);
    if (!old) return tl::make_unexpected(old.error());
    auto found = old->Step();
    if (!found) return tl::make_unexpected(found.error());
    if (!*found) continue;
    const int delta = (u.status == "success") - (old->Text(3) == "success");
    if (delta != 0) totals.Add("messages", old->Int64(0), old->Text(1), old->Text(2), 0, delta);
    auto r = Execute(c, "UPDATE monitoring_messages SET status = ?, level = ? WHERE id = ?",
                     u.status, u.level, u.id);
    if (!r) return tl::make_unexpected(r.error());
  }
  for (const auto& l : b.llm_calls) {
    const auto& x = l.context;
    auto r = Execute(c,
                     "INSERT INTO monitoring_llm_calls (id, timestamp, model_name, "
                     "input_tokens, output_tokens, total_tokens, duration, status, bot_id, "
                     "bot_name, pipeline_id, pipeline_name, session_id, error_message, "
                     "message_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                     l.id, Millis(l.timestamp), l.model_name, l.input_tokens, l.output_tokens,
                     l.input_tokens + l.output_tokens, l.duration_ms, l.status, x.bot_id,
                     x.bot_name, x.pipeline_id, x.pipeline_name, x.session_id, Opt(l.error_message),
                     Opt(x.message_id));
    if (!r) return tl::make_unexpected(r.error());
    if (*r == 1) totals.Add("llm_calls", Millis(l.timestamp), x.bot_id, x.pipeline_id, 1, 0);
  }
  for (const auto& e : b.embedding_calls) {
    const auto& x = e.context;
    auto r = Execute(c,
                     "INSERT INTO monitoring_embedding_calls (id, timestamp, model_name, "
                     "prompt_tokens, total_tokens, duration, input_count, status, error_message, "
                     "knowledge_base_id, query_text, session_id, message_id, call_type) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                     e.id, Millis(e.timestamp), e.model_name, e.prompt_tokens, e.total_tokens,
                     e.duration_ms, e.input_count, e.status, Opt(e.error_message),
                     Opt(e.knowledge_base_id), Opt(e.query_text), Opt(x.session_id),
                     Opt(x.message_id), e.call_type);
    if (!r) return tl::make_unexpected(r.error());
    if (*r == 1) totals.Add("embedding_calls", Millis(e.timestamp), "", "", 1, 0);
  }
  for (const auto& e : b.errors) {
    const auto& x = e.context;
    auto r = Execute(c,
                     "INSERT INTO monitoring_errors (id, timestamp, error_type, "
                     "error_message, bot_id, bot_name, pipeline_id, pipeline_name, session_id, "
                     "message_id) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                     e.id, Millis(e.timestamp), e.error_type, e.error_message, x.bot_id, x.bot_name,
                     x.pipeline_id, x.pipeline_name, Opt(x.session_id), Opt(x.message_id));
    if (!r) return tl::make_unexpected(r.error());
    if (*r == 1) totals.Add("errors", Millis(e.timestamp), x.bot_id, x.pipeline_id, 1, 0);
  }
  for (const auto& f : b.feedback) {
    const auto& x = f.context;
    // One row per reply and user (migration 10): a changed mind replaces the earlier rating.
    auto r = Execute(c,
                     "INSERT INTO monitoring_feedback (id, timestamp, feedback_id, feedback_type, "
                     "feedback_content, inaccurate_reasons, bot_id, bot_name, pipeline_id, "
                     "pipeline_name, session_id, message_id, stream_id, user_id, platform) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                     "ON CONFLICT (feedback_id, user_id) DO UPDATE SET "
                     "timestamp = excluded.timestamp, feedback_type = excluded.feedback_type, "
                     "feedback_content = excluded.feedback_content, "
                     "inaccurate_reasons = excluded.inaccurate_reasons",
                     f.id, Millis(f.timestamp), f.feedback_id, std::int64_t{f.feedback_type},
                     Opt(f.feedback_content), Opt(f.inaccurate_reasons), x.bot_id, x.bot_name,
                     x.pipeline_id, x.pipeline_name, Opt(x.session_id), Opt(x.message_id),
                     Opt(f.stream_id), f.user_id, Opt(f.platform));
    if (!r) return tl::make_unexpected(r.error());
  }
  for (const auto& [key, counts] : totals.hourly) {
    const auto& [kind, hour, bot, pipeline] = key;
    if (auto ok =
            RollupAdd(c, kind, hour * kRollupHourMs, bot, pipeline, counts.first, counts.second);
        !ok) {
      return ok;
    }
  }
  return util::Ok();
}

}  // namespace

util::Result<void> SqlMonitoringRepository::Write(const domain::MonitoringBatch& batch) {
  if (batch.empty()) return util::Ok();
  return db_.Write([&](Connection& c) { return WriteIn(c, batch); });
}

util::Result<std::int64_t> SqlMonitoringRepository::Prune(util::TimePoint before) {
  // Whole hours only, so the hourly counts drop exactly the records deleted.
  const std::int64_t cut = Millis(before) / kRollupHourMs * kRollupHourMs;
  return db_.Write([&](Connection& c) -> util::Result<std::int64_t> {
    std::int64_t removed = 0;
    for (auto [table, column] : std::array<std::pair<const char*, const char*>, 6>{
             {{"monitoring_messages", "timestamp"},
              {"monitoring_llm_calls", "timestamp"},
              {"monitoring_embedding_calls", "timestamp"},
              {"monitoring_errors", "timestamp"},
              {"monitoring_feedback", "timestamp"},
              {"monitoring_sessions", "last_activity"}}}) {
      auto n = Execute(c, fmt::format("DELETE FROM {} WHERE {} < ?", table, column), cut);
      if (!n) return tl::make_unexpected(n.error());
      removed += *n;
    }
    auto hours = Execute(c, "DELETE FROM monitoring_hourly WHERE hour < ?", cut / kRollupHourMs);
    if (!hours) return tl::make_unexpected(hours.error());
    return removed;
  });
}

util::Result<domain::MonitoringPage> SqlMonitoringRepository::Page(MonitoringTable table,
                                                                   const MonitoringFilter& f) {
  const TableSpec& spec = SpecOf(table);
  const Where w = WhereOf(spec, f, table);
  return db_.Read([&](Connection& c) -> util::Result<domain::MonitoringPage> {
    domain::MonitoringPage page;
    if (f.with_total && RollupCovers(table, f)) {
      auto total = RollupCount(c, table, f);
      if (!total) return tl::make_unexpected(total.error());
      page.total = total->first;
    } else if (f.with_total) {
      auto total = Count(c, spec.name, w);
      if (!total) return tl::make_unexpected(total.error());
      page.total = *total;
    }
    if (f.limit <= 0) return page;
    auto stmt = c.Prepare(fmt::format("SELECT {} FROM {}{} ORDER BY {} DESC LIMIT ? OFFSET ?",
                                      SelectList(spec), spec.name, w.sql, spec.time_column));
    if (!stmt) return tl::make_unexpected(stmt.error());
    int index = 1;
    w.BindTo(*stmt, index);
    stmt->Bind(index, f.limit);
    stmt->Bind(index + 1, f.offset);
    for (;;) {
      auto row = stmt->Step();
      if (!row) return tl::make_unexpected(row.error());
      if (!*row) break;
      page.rows.push_back(ReadRow(spec, *stmt));
    }
    return page;
  });
}

util::Result<domain::MonitoringOverview> SqlMonitoringRepository::Overview(
    const MonitoringFilter& f) {
  return db_.Read([&](Connection& c) -> util::Result<domain::MonitoringOverview> {
    domain::MonitoringOverview o;
    auto count = [&](MonitoringTable t, const std::string& extra) -> util::Result<std::int64_t> {
      const auto& spec = SpecOf(t);
      return Count(c, spec.name, WhereOf(spec, f, t), extra);
    };
    // The overview never filters by session (only the message list does).
    MonitoringFilter g = f;
    g.session_ids.clear();
    g.knowledge_base.reset();
    auto messages = RollupCount(c, MonitoringTable::kMessages, g);
    if (!messages) return tl::make_unexpected(messages.error());
    o.total_messages = messages->first;
    o.success_messages = messages->second;
    auto llm = RollupCount(c, MonitoringTable::kLlmCalls, g);
    if (!llm) return tl::make_unexpected(llm.error());
    o.llm_calls = llm->first;
    auto embedding = RollupCount(c, MonitoringTable::kEmbeddingCalls, g);
    if (!embedding) return tl::make_unexpected(embedding.error());
    o.embedding_calls = embedding->first;
    auto active = count(MonitoringTable::kSessions, "is_active = 1");
    if (!active) return tl::make_unexpected(active.error());
    o.active_sessions = *active;
    return o;
  });
}

util::Result<domain::FeedbackStats> SqlMonitoringRepository::Feedback(const MonitoringFilter& f) {
  const auto& spec = SpecOf(MonitoringTable::kFeedback);
  const Where w = WhereOf(spec, f, MonitoringTable::kFeedback);
  return db_.Read([&](Connection& c) -> util::Result<domain::FeedbackStats> {
    domain::FeedbackStats stats;
    auto stmt =
        c.Prepare(fmt::format("SELECT bot_id, bot_name, COUNT(*), "
                              "SUM(CASE WHEN feedback_type = 1 THEN 1 ELSE 0 END), "
                              "SUM(CASE WHEN feedback_type = 2 THEN 1 ELSE 0 END) "
                              "FROM monitoring_feedback{} GROUP BY bot_id, bot_name "
                              "ORDER BY bot_id NULLS FIRST, bot_name NULLS FIRST",
                              w.sql));
    if (!stmt) return tl::make_unexpected(stmt.error());
    int index = 1;
    w.BindTo(*stmt, index);
    for (;;) {
      auto row = stmt->Step();
      if (!row) return tl::make_unexpected(row.error());
      if (!*row) break;
      util::JsonObject b;
      b["bot_id"] = stmt->IsNull(0) ? util::Json(nullptr) : util::Json(stmt->Text(0));
      b["bot_name"] = stmt->IsNull(1) ? util::Json(nullptr) : util::Json(stmt->Text(1));
      b["total"] = stmt->Int64(2);
      b["likes"] = stmt->Int64(3);
      b["dislikes"] = stmt->Int64(4);
      stats.total += stmt->Int64(2);
      stats.likes += stmt->Int64(3);
      stats.dislikes += stmt->Int64(4);
      stats.by_bot.push_back(std::move(b));
    }
    return stats;
  });
}

util::Result<std::optional<util::JsonObject>> SqlMonitoringRepository::Find(
    MonitoringTable table, const std::string& key) {
  const TableSpec& spec = SpecOf(table);
  return db_.Read([&](Connection& c) -> util::Result<std::optional<util::JsonObject>> {
    // A session id may belong to several bots: the most recent one answers.
    auto stmt =
        Query(c,
              fmt::format("SELECT {} FROM {} WHERE {} = ? ORDER BY {} DESC LIMIT 1",
                          SelectList(spec), spec.name, spec.columns.front().name, spec.time_column),
              key);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return std::optional<util::JsonObject>();
    return std::optional<util::JsonObject>(ReadRow(spec, *stmt));
  });
}

util::Result<std::vector<util::JsonObject>> SqlMonitoringRepository::OfMessage(
    MonitoringTable table, const std::string& message_id) {
  const TableSpec& spec = SpecOf(table);
  const std::string_view key = table == MonitoringTable::kMessages ? "session_id" : "message_id";
  return db_.Read([&](Connection& c) -> util::Result<std::vector<util::JsonObject>> {
    auto stmt = Query(c,
                      fmt::format("SELECT {} FROM {} WHERE {} = ? ORDER BY {} LIMIT 1000",
                                  SelectList(spec), spec.name, key, spec.time_column),
                      message_id);
    if (!stmt) return tl::make_unexpected(stmt.error());
    std::vector<util::JsonObject> rows;
    for (;;) {
      auto row = stmt->Step();
      if (!row) return tl::make_unexpected(row.error());
      if (!*row) break;
      rows.push_back(ReadRow(spec, *stmt));
    }
    return rows;
  });
}

}  // namespace sb::storage::sql
