// LangBot's /monitoring/* routes and /stats/basic over the monitoring records: filters by bot,
// pipeline and time range, pages, CSV export. Limits, offsets and ranges are clamped, so an
// absurd query costs one bounded page, never a scan without end.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string>

#include "http/api/api.hpp"
#include "http/api/handler_support.hpp"
#include "util/clock.hpp"

namespace sb::http::api {

namespace {

using domain::MonitoringFilter;
using domain::MonitoringTable;
using util::ErrorCode;

constexpr int kMaxPage = 1000;      // rows per list answer
constexpr int kMaxExport = 100000;  // rows per CSV (LangBot's default export limit)
constexpr std::int64_t kMaxOffset = 10'000'000;
constexpr std::size_t kMaxIds = 100;  // botId / pipelineId / sessionId values per query

std::vector<std::string> QueryAll(const Request& req, std::string_view name) {
  std::vector<std::string> out;
  for (const auto& [k, v] : req.query) {
    if (k == name && !v.empty() && out.size() < kMaxIds) out.push_back(v);
  }
  return out;
}

std::optional<std::int64_t> ParseInt(std::string_view text) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

// ISO 8601 as LangBot's parse_iso_datetime takes it ("2026-11-27T01:00:00", a fraction, "Z" or
// "+hh:mm"); a naive time is UTC. Returns unix millis.
util::Result<std::int64_t> ParseIsoMillis(std::string_view s) {
  auto bad = [&] {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("not an ISO 8601 time: {}", s.substr(0, 64)));
  };
  int y, mo, d, h = 0, mi = 0, sec = 0;
  if (s.size() < 10 ||
      std::sscanf(std::string(s.substr(0, 10)).c_str(), "%4d-%2d-%2d", &y, &mo, &d) != 3) {
    return bad();
  }
  std::size_t i = 10;
  if (i < s.size() && (s[i] == 'T' || s[i] == ' ')) {
    if (s.size() < i + 6) return bad();
    if (std::sscanf(std::string(s.substr(i + 1, 8)).c_str(), "%2d:%2d:%2d", &h, &mi, &sec) < 2) {
      return bad();
    }
    i += s.size() >= i + 9 && s[i + 6] == ':' ? 9 : 6;
  }
  std::int64_t frac_ms = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (digits < 3) frac_ms = frac_ms * 10 + (s[i] - '0');
      ++digits;
      ++i;
    }
    for (; digits < 3; ++digits) frac_ms *= 10;
  }
  std::int64_t offset_min = 0;
  if (i < s.size()) {
    if (s[i] == 'Z' && i + 1 == s.size()) {
      // UTC
    } else if ((s[i] == '+' || s[i] == '-') && s.size() - i >= 6) {
      int oh = 0, om = 0;
      if (std::sscanf(std::string(s.substr(i + 1)).c_str(), "%2d:%2d", &oh, &om) != 2) {
        return bad();
      }
      offset_min = (s[i] == '+' ? 1 : -1) * (oh * 60 + om);
    } else {
      return bad();
    }
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970 ||
      y > 9999) {
    return bad();
  }
  using namespace std::chrono;
  const sys_days date =
      year{y} / month{static_cast<unsigned>(mo)} / std::chrono::day{static_cast<unsigned>(d)};
  const std::int64_t ms = duration_cast<milliseconds>(date.time_since_epoch()).count() +
                          ((h * 60 + mi) * 60 + sec) * 1000LL + frac_ms - offset_min * 60000;
  return ms;
}

// The filter of a list route; `default_limit` as LangBot's route has it.
util::Result<MonitoringFilter> FilterOf(const Request& req, int default_limit, int max_limit) {
  MonitoringFilter f;
  f.bot_ids = QueryAll(req, "botId");
  f.pipeline_ids = QueryAll(req, "pipelineId");
  f.session_ids = QueryAll(req, "sessionId");
  for (auto [name, target] : {std::pair{"startTime", &f.start_ms}, {"endTime", &f.end_ms}}) {
    auto v = req.Query(name);
    if (!v || v->empty()) continue;
    auto ms = ParseIsoMillis(*v);
    if (!ms) return tl::make_unexpected(ms.error());
    *target = *ms;
  }
  for (auto [name, fallback, max, target] :
       {std::tuple{"limit", std::int64_t{default_limit}, std::int64_t{max_limit}, &f.limit},
        std::tuple{"offset", std::int64_t{0}, kMaxOffset, &f.offset}}) {
    std::int64_t value = fallback;
    if (auto v = req.Query(name); v && !v->empty()) {
      auto n = ParseInt(*v);
      if (!n) {
        return util::Fail(ErrorCode::kInvalidArgument, fmt::format("{} must be an integer", name));
      }
      value = *n;
    }
    *target = static_cast<int>(std::clamp<std::int64_t>(value, 0, max));
  }
  // An end before the start is an empty range, answered as such without reading rows.
  if (f.start_ms && f.end_ms && *f.end_ms < *f.start_ms) f.limit = 0;
  if (auto v = req.Query("isActive"); v && !v->empty()) {
    std::string lower(*v);
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    f.is_active = lower == "true";
  }
  if (auto v = req.Query("feedbackType"); v && !v->empty()) {
    auto n = ParseInt(*v);
    if (!n) return util::Fail(ErrorCode::kInvalidArgument, "feedbackType must be an integer");
    f.feedback_type = static_cast<int>(std::clamp<std::int64_t>(*n, -1, 100));
  }
  if (auto v = req.Query("knowledgeBaseId"); v && !v->empty()) f.knowledge_base = std::string(*v);
  return f;
}

util::JsonArray Rows(domain::MonitoringPage& page) {
  util::JsonArray out;
  out.reserve(page.rows.size());
  for (auto& r : page.rows) out.push_back(std::move(r));
  return out;
}

double Round2(double v) {
  return static_cast<double>(static_cast<std::int64_t>(v * 100 + 0.5)) / 100;
}

util::JsonObject EncodeOverview(const domain::MonitoringOverview& o) {
  const double rate = o.total_messages > 0 ? 100.0 * static_cast<double>(o.success_messages) /
                                                 static_cast<double>(o.total_messages)
                                           : 100.0;
  return {{"total_messages", o.total_messages},   {"llm_calls", o.llm_calls},
          {"embedding_calls", o.embedding_calls}, {"model_calls", o.llm_calls + o.embedding_calls},
          {"success_rate", Round2(rate)},         {"active_sessions", o.active_sessions}};
}

// LangBot's _escape_csv_field: CR LF folded to LF, quoted when it holds , " or a line break.
void AppendCsvField(std::string& out, const util::Json& v) {
  std::string text;
  if (v.is_string()) {
    text = std::string(v.as_string());
  } else if (v.is_bool()) {
    text = v.as_bool() ? "True" : "False";
  } else if (v.is_int64()) {
    text = std::to_string(v.as_int64());
  } else if (v.is_double()) {
    text = fmt::format("{}", v.as_double());
  }
  std::string folded;
  folded.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      folded += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      folded += text[i];
    }
  }
  if (folded.find_first_of(",\"\n") == std::string::npos) {
    out += folded;
    return;
  }
  out += '"';
  for (char c : folded) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

// The export's columns per type, as LangBot's route lists them; times as "YYYY-MM-DD HH:MM:SS".
struct ExportSpec {
  MonitoringTable table;
  std::vector<std::string_view> headers;
};

std::optional<ExportSpec> ExportOf(std::string_view type) {
  if (type == "messages") {
    return ExportSpec{MonitoringTable::kMessages,
                      {"id", "timestamp", "bot_id", "bot_name", "pipeline_id", "pipeline_name",
                       "runner_name", "message_content", "message_text", "session_id", "status",
                       "level", "platform", "user_id"}};
  }
  if (type == "llm-calls") {
    return ExportSpec{
        MonitoringTable::kLlmCalls,
        {"id", "timestamp", "model_name", "input_tokens", "output_tokens", "total_tokens",
         "duration_ms", "cost", "status", "bot_id", "bot_name", "pipeline_id", "pipeline_name",
         "session_id", "message_id", "error_message"}};
  }
  if (type == "embedding-calls") {
    return ExportSpec{MonitoringTable::kEmbeddingCalls,
                      {"id", "timestamp", "model_name", "prompt_tokens", "total_tokens",
                       "duration_ms", "input_count", "status", "error_message", "knowledge_base_id",
                       "query_text", "session_id", "message_id", "call_type"}};
  }
  if (type == "errors") {
    return ExportSpec{MonitoringTable::kErrors,
                      {"id", "timestamp", "error_type", "error_message", "bot_id", "bot_name",
                       "pipeline_id", "pipeline_name", "session_id", "message_id", "stack_trace"}};
  }
  if (type == "sessions") {
    return ExportSpec{
        MonitoringTable::kSessions,
        {"session_id", "bot_id", "bot_name", "pipeline_id", "pipeline_name", "message_count",
         "start_time", "last_activity", "is_active", "platform", "user_id"}};
  }
  if (type == "feedback") {
    return ExportSpec{MonitoringTable::kFeedback,
                      {"id", "timestamp", "feedback_id", "feedback_type", "feedback_content",
                       "inaccurate_reasons", "bot_id", "bot_name", "pipeline_id", "pipeline_name",
                       "session_id", "message_id", "stream_id", "user_id", "platform"}};
  }
  return std::nullopt;
}

// A stored row's value under an export header (the CSV renames a few columns).
util::Json ExportValue(const util::JsonObject& row, std::string_view header) {
  std::string_view key = header;
  if (header == "duration_ms") key = "duration";
  if (header == "message_text") key = "message_content";
  auto it = row.find(key);
  if (it == row.end()) return nullptr;
  if (header == "timestamp" || header == "start_time" || header == "last_activity") {
    if (it->value().is_string()) {
      std::string t(it->value().as_string());
      std::replace(t.begin(), t.end(), 'T', ' ');
      return util::Json(t.substr(0, 19));
    }
  }
  return it->value();
}

}  // namespace

void RegisterMonitoringRoutes(Router& router, ApiContext& ctx) {
  if (!ctx.monitoring) return;
  domain::MonitoringRepository& repo = *ctx.monitoring;

  auto list = [&router, &repo](std::string path, MonitoringTable table, std::string key,
                               int default_limit) {
    router.Add({"GET", "/api/v1/monitoring/" + path, AuthClass::kUserOnly,
                [&repo, table, key, default_limit](Request& req) {
                  auto f = FilterOf(req, default_limit, kMaxPage);
                  if (!f) return Fail(req, f.error());
                  auto page = repo.Page(table, *f);
                  if (!page) return Fail(req, page.error());
                  return JsonOk(util::JsonObject{{key, Rows(*page)},
                                                 {"total", page->total},
                                                 {"limit", f->limit},
                                                 {"offset", f->offset}});
                }});
  };
  list("messages", MonitoringTable::kMessages, "messages", 100);
  list("llm-calls", MonitoringTable::kLlmCalls, "llm_calls", 100);
  list("embedding-calls", MonitoringTable::kEmbeddingCalls, "embedding_calls", 100);
  list("sessions", MonitoringTable::kSessions, "sessions", 100);
  list("errors", MonitoringTable::kErrors, "errors", 100);
  list("feedback", MonitoringTable::kFeedback, "feedback", 100);

  router.Add({"GET", "/api/v1/monitoring/overview", AuthClass::kUserOnly, [&repo](Request& req) {
                auto f = FilterOf(req, 0, 0);
                if (!f) return Fail(req, f.error());
                auto o = repo.Overview(*f);
                if (!o) return Fail(req, o.error());
                return JsonOk(EncodeOverview(*o));
              }});

  router.Add(
      {"GET", "/api/v1/monitoring/data", AuthClass::kUserOnly, [&repo](Request& req) {
         auto f = FilterOf(req, 50, kMaxPage);
         if (!f) return Fail(req, f.error());
         f->offset = 0;
         f->session_ids.clear();
         auto o = repo.Overview(*f);
         if (!o) return Fail(req, o.error());
         util::JsonObject data{{"overview", EncodeOverview(*o)}};
         util::JsonObject totals;
         // The overview counted messages and model calls already: not counted twice.
         for (auto [table, key, known] :
              {std::tuple{MonitoringTable::kMessages, "messages", o->total_messages},
               std::tuple{MonitoringTable::kLlmCalls, "llmCalls", o->llm_calls},
               std::tuple{MonitoringTable::kEmbeddingCalls, "embeddingCalls", o->embedding_calls},
               std::tuple{MonitoringTable::kSessions, "sessions", std::int64_t{-1}},
               std::tuple{MonitoringTable::kErrors, "errors", std::int64_t{-1}}}) {
           f->with_total = known < 0;
           auto page = repo.Page(table, *f);
           if (!page) return Fail(req, page.error());
           totals[key] = known < 0 ? page->total : known;
           data[key] = Rows(*page);
         }
         data["totalCount"] = std::move(totals);
         return JsonOk(data);
       }});

  router.Add({"GET", "/api/v1/monitoring/messages/{message_id}/details", AuthClass::kUserOnly,
              [&repo](Request& req) {
                const std::string id(req.PathParam("message_id"));
                auto message = repo.Find(MonitoringTable::kMessages, id);
                if (!message) return Fail(req, message.error());
                if (!*message) {
                  return Fail(req, {ErrorCode::kNotFound,
                                    fmt::format("Message {} not found", id.substr(0, 100))});
                }
                auto calls = repo.OfMessage(MonitoringTable::kLlmCalls, id);
                if (!calls) return Fail(req, calls.error());
                auto errors = repo.OfMessage(MonitoringTable::kErrors, id);
                if (!errors) return Fail(req, errors.error());
                std::int64_t in = 0, out = 0, duration = 0;
                util::JsonArray call_rows, error_rows;
                for (auto& c : *calls) {
                  in += c["input_tokens"].to_number<std::int64_t>();
                  out += c["output_tokens"].to_number<std::int64_t>();
                  duration += c["duration"].to_number<std::int64_t>();
                  call_rows.push_back(std::move(c));
                }
                for (auto& e : *errors) error_rows.push_back(std::move(e));
                const auto n = static_cast<std::int64_t>(call_rows.size());
                util::JsonObject stats{{"total_calls", n},
                                       {"total_input_tokens", in},
                                       {"total_output_tokens", out},
                                       {"total_tokens", in + out},
                                       {"total_duration_ms", duration},
                                       {"average_duration_ms", n ? duration / n : 0}};
                return JsonOk(util::JsonObject{{"message_id", id},
                                               {"found", true},
                                               {"message", std::move(**message)},
                                               {"llm_calls", std::move(call_rows)},
                                               {"llm_stats", std::move(stats)},
                                               {"errors", std::move(error_rows)}});
              }});

  router.Add({"GET", "/api/v1/monitoring/sessions/{session_id}/analysis", AuthClass::kUserOnly,
              [&repo](Request& req) {
                const std::string id(req.PathParam("session_id"));
                auto session = repo.Find(MonitoringTable::kSessions, id);
                if (!session) return Fail(req, session.error());
                // LangBot answers success with found: false; the console handles it.
                if (!*session)
                  return JsonOk(util::JsonObject{{"session_id", id}, {"found", false}});
                auto messages = repo.OfMessage(MonitoringTable::kMessages, id);
                if (!messages) return Fail(req, messages.error());
                std::int64_t success = 0, error = 0, pending = 0;
                for (const auto& m : *messages) {
                  const auto& s = m.at("status").as_string();
                  success += s == "success";
                  error += s == "error";
                  pending += s == "pending";
                }
                util::JsonObject stats{{"total", static_cast<std::int64_t>(messages->size())},
                                       {"success", success},
                                       {"error", error},
                                       {"pending", pending}};
                return JsonOk(util::JsonObject{{"session_id", id},
                                               {"found", true},
                                               {"session", std::move(**session)},
                                               {"message_stats", std::move(stats)}});
              }});

  router.Add(
      {"GET", "/api/v1/monitoring/feedback/stats", AuthClass::kUserOnly, [&repo](Request& req) {
         auto f = FilterOf(req, 0, 0);
         if (!f) return Fail(req, f.error());
         auto s = repo.Feedback(*f);
         if (!s) return Fail(req, s.error());
         const double rate =
             s->total ? 100.0 * static_cast<double>(s->likes) / static_cast<double>(s->total) : 0.0;
         return JsonOk(util::JsonObject{{"total_feedback", s->total},
                                        {"total_likes", s->likes},
                                        {"total_dislikes", s->dislikes},
                                        {"satisfaction_rate", Round2(rate)},
                                        {"by_bot", std::move(s->by_bot)}});
       }});

  router.Add({"GET", "/api/v1/monitoring/export", AuthClass::kUserOnly, [&repo](Request& req) {
                const std::string type(req.Query("type").value_or("messages"));
                auto spec = ExportOf(type);
                if (!spec) {
                  return Fail(req, {ErrorCode::kInvalidArgument,
                                    fmt::format("Invalid export type: {}", type.substr(0, 64))});
                }
                auto f = FilterOf(req, kMaxExport, kMaxExport);
                if (!f) return Fail(req, f.error());
                f->offset = 0;
                auto page = repo.Page(spec->table, *f);
                if (!page) return Fail(req, page.error());
                // A UTF-8 byte order mark first, as LangBot writes it, for spreadsheet programs.
                std::string csv = "\xEF\xBB\xBF";
                for (std::size_t i = 0; i < spec->headers.size(); ++i) {
                  if (i) csv += ',';
                  csv += spec->headers[i];
                }
                csv += '\n';
                for (const auto& row : page->rows) {
                  for (std::size_t i = 0; i < spec->headers.size(); ++i) {
                    if (i) csv += ',';
                    AppendCsvField(csv, ExportValue(row, spec->headers[i]));
                  }
                  csv += '\n';
                }
                Response r;
                r.content_type = "text/csv; charset=utf-8";
                r.headers.emplace_back(
                    "Content-Disposition",
                    fmt::format("attachment; filename=\"monitoring-{}-{}.csv\"", type,
                                util::ToUnixSeconds(util::SystemClock().Now())));
                r.body = std::move(csv);
                return r;
              }});

  // LangBot counts its in-memory sessions and queries since start; ours come from the monitoring
  // records (kept for the retention), so they survive a restart. query_count counts every
  // recorded message, received and replies, as the overview's total_messages does.
  router.Add({"GET", "/api/v1/stats/basic", AuthClass::kUserOnly, [&repo](Request& req) {
                MonitoringFilter f;
                auto o = repo.Overview(f);
                if (!o) return Fail(req, o.error());
                f.limit = 0;
                auto sessions = repo.Page(MonitoringTable::kSessions, f);
                if (!sessions) return Fail(req, sessions.error());
                return JsonOk(util::JsonObject{{"active_session_count", o->active_sessions},
                                               {"conversation_count", sessions->total},
                                               {"query_count", o->total_messages}});
              }});
}

}  // namespace sb::http::api
