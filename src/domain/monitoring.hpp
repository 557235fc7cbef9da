// Monitoring: records of what the bots did (messages, model and embedding calls, sessions,
// errors, feedback), the port the message path and the model gateway report to, and the
// repository the records are kept in. LangBot's /monitoring routes read them.
//   sink.RecordMessage(record);            // message path: never blocks, may drop
//   repo.Page(MonitoringTable::kMessages, filter);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::domain {

// Where a record came from; empty strings when unknown (a model test has no bot).
struct MonitoringContext {
  std::string bot_id;
  std::string bot_name;
  std::string pipeline_id;
  std::string pipeline_name;
  std::string session_id;
  std::string message_id;
};

struct MonitoredMessage {
  std::string id;
  util::TimePoint timestamp;
  MonitoringContext context;  // context.message_id is unused (the record is the message)
  std::string message_content;
  std::string status;  // pending | success | error | ignored
  std::string level;   // info | warning | error
  std::string platform;
  std::string user_id;
  std::string user_name;
  std::string runner_name;
  std::string role = "user";  // user | assistant
};

// A later status of a message recorded earlier (its reply went out, or failed).
struct MessageStatusChange {
  std::string id;
  std::string status;
  std::string level;
};

struct MonitoredLlmCall {
  std::string id;
  util::TimePoint timestamp;
  MonitoringContext context;
  std::string model_name;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t duration_ms = 0;
  std::string status;         // success | error
  std::string error_message;  // the error kind and message; never a key
};

struct MonitoredEmbeddingCall {
  std::string id;
  util::TimePoint timestamp;
  MonitoringContext context;
  std::string model_name;
  std::int64_t prompt_tokens = 0;
  std::int64_t total_tokens = 0;
  std::int64_t duration_ms = 0;
  std::int64_t input_count = 0;
  std::string status;
  std::string error_message;
  std::string knowledge_base_id;
  std::string query_text;
  std::string call_type = "embedding";
};

struct MonitoredError {
  std::string id;
  util::TimePoint timestamp;
  MonitoringContext context;
  std::string error_type;
  std::string error_message;
};

// A user's rating of a reply (LangBot's monitoring_feedback row). One per feedback slot and user:
// a later rating of the same reply by the same user replaces the earlier one.
struct MonitoredFeedback {
  std::string id;
  util::TimePoint timestamp;
  MonitoringContext context;  // context.message_id: the platform id of the rated reply's message
  std::string feedback_id;
  int feedback_type = 1;           // 1 like, 2 dislike, 3 withdrawn
  std::string feedback_content;    // empty: none
  std::string inaccurate_reasons;  // a JSON array; empty: none
  std::string stream_id;
  std::string user_id;
  std::string platform;
};

// What the writer hands the repository in one transaction. Sessions are not written directly:
// each message of role user upserts its session (count, first and last activity).
struct MonitoringBatch {
  std::vector<MonitoredMessage> messages;
  std::vector<MessageStatusChange> status_changes;  // applied after `messages`
  std::vector<MonitoredLlmCall> llm_calls;
  std::vector<MonitoredEmbeddingCall> embedding_calls;
  std::vector<MonitoredError> errors;
  std::vector<MonitoredFeedback> feedback;
  bool empty() const {
    return messages.empty() && status_changes.empty() && llm_calls.empty() &&
           embedding_calls.empty() && errors.empty() && feedback.empty();
  }
  std::size_t size() const {
    return messages.size() + status_changes.size() + llm_calls.size() + embedding_calls.size() +
           errors.size() + feedback.size();
  }
};

// Thread-safe and non-blocking: implementations queue and write elsewhere, and may drop a
// record when their queue is full (counted). Called on I/O threads on the message path.
class MonitoringSink {
 public:
  virtual ~MonitoringSink() = default;
  virtual void RecordMessage(MonitoredMessage record) = 0;
  virtual void ChangeMessageStatus(MessageStatusChange change) = 0;
  virtual void RecordLlmCall(MonitoredLlmCall record) = 0;
  virtual void RecordEmbeddingCall(MonitoredEmbeddingCall record) = 0;
  virtual void RecordError(MonitoredError record) = 0;
  virtual void RecordFeedback(MonitoredFeedback record) = 0;
};

enum class MonitoringTable { kMessages, kLlmCalls, kEmbeddingCalls, kSessions, kErrors, kFeedback };

// Filters of LangBot's routes. Empty lists mean "any". Times are inclusive, in unix millis.
// Callers clamp `limit` and `offset`; the repository trusts them.
struct MonitoringFilter {
  std::vector<std::string> bot_ids;
  std::vector<std::string> pipeline_ids;
  std::vector<std::string> session_ids;  // messages only
  std::optional<std::int64_t> start_ms;
  std::optional<std::int64_t> end_ms;
  std::optional<bool> is_active;              // sessions only
  std::optional<int> feedback_type;           // feedback only
  std::optional<std::string> knowledge_base;  // embedding calls only
  int limit = 100;
  int offset = 0;
  bool with_total = true;  // false: Page leaves `total` at 0 (the caller knows it already)
};

// Rows are LangBot's column dumps (serialize_model): keys are its column names, times ISO 8601.
struct MonitoringPage {
  std::int64_t total = 0;
  std::vector<util::JsonObject> rows;
};

struct MonitoringOverview {
  std::int64_t total_messages = 0;
  std::int64_t success_messages = 0;
  std::int64_t llm_calls = 0;
  std::int64_t embedding_calls = 0;
  std::int64_t active_sessions = 0;
};

struct FeedbackStats {
  std::int64_t total = 0;
  std::int64_t likes = 0;
  std::int64_t dislikes = 0;
  util::JsonArray by_bot;  // {bot_id, bot_name, total, likes, dislikes}
};

// Thread-safe; every method may block (SQL) and runs on the blocking pool.
class MonitoringRepository {
 public:
  virtual ~MonitoringRepository() = default;
  // One transaction for the whole batch; a record whose id exists already is skipped.
  virtual util::Result<void> Write(const MonitoringBatch& batch) = 0;
  // Deletes every record older than `before` (sessions by last activity); returns how many.
  virtual util::Result<std::int64_t> Prune(util::TimePoint before) = 0;
  // Newest first. The sessions table ignores start/end against timestamp and uses start_time.
  virtual util::Result<MonitoringPage> Page(MonitoringTable table,
                                            const MonitoringFilter& filter) = 0;
  virtual util::Result<MonitoringOverview> Overview(const MonitoringFilter& filter) = 0;
  virtual util::Result<FeedbackStats> Feedback(const MonitoringFilter& filter) = 0;
  // One row by key (messages by id, sessions by session_id); nullopt when absent.
  virtual util::Result<std::optional<util::JsonObject>> Find(MonitoringTable table,
                                                             const std::string& key) = 0;
  // Records of `table` that belong to message `message_id` (llm calls, errors), oldest first.
  virtual util::Result<std::vector<util::JsonObject>> OfMessage(MonitoringTable table,
                                                                const std::string& message_id) = 0;
};

}  // namespace sb::domain
