// The change feed on PostgreSQL: every instance sharing the database announces its committed
// changes with NOTIFY on one channel and LISTENs there for the others'. The payload is
// "<instance id>|<kind>|<id>"; an instance ignores what it sent itself.
//   PgChangeFeed feed(storage.database(), instance_id);   // services Publish through it
//   auto listener = PgChangeListener::Start(url, instance_id,
//       {.on_change = [](ChangeKind k, const std::string& id) {..}, .on_missed = [] {..}});
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "domain/change_feed.hpp"
#include "storage/sql/database.hpp"
#include "util/error.hpp"

namespace sb::storage::postgres {

class PgListener;

inline constexpr const char* kChangeChannel = "switchboard_changes";
// NOTIFY payloads must stay under 8000 bytes; an id that would not fit is sent empty, which
// every receiver reads as "everything of this kind".
inline constexpr std::size_t kMaxChangePayload = 7999;

struct ChangeMessage {
  std::string instance;
  domain::ChangeKind kind = domain::ChangeKind::kSystem;
  std::string id;
};

std::string FormatChange(std::string_view instance, domain::ChangeKind kind, std::string_view id);
// kInvalidArgument (saying why) for a payload that is not "<instance>|<kind>|<id>" with a known
// kind and a non-empty instance, or that is too long.
util::Result<ChangeMessage> ParseChange(std::string_view payload);

// Thread-safe. Publish runs one short write transaction (NOTIFY is delivered on commit).
class PgChangeFeed final : public domain::ChangeFeed {
 public:
  PgChangeFeed(sql::Database& db, std::string instance_id)
      : db_(db), instance_id_(std::move(instance_id)) {}
  void Publish(domain::ChangeKind kind, std::string_view id) override;

 private:
  sql::Database& db_;
  const std::string instance_id_;
};

struct ChangeHandlers {
  // On the listener's thread, one change at a time: keep it short (post slow work elsewhere).
  std::function<void(domain::ChangeKind kind, const std::string& id)> on_change;
  // The connection was lost and is back: changes announced meanwhile are gone, so everything
  // cached from the database must be dropped.
  std::function<void()> on_missed;
};

// Owns a PgListener (its own connection, reconnecting with backoff) on kChangeChannel.
class PgChangeListener {
 public:
  static util::Result<std::unique_ptr<PgChangeListener>> Start(const std::string& url,
                                                               std::string instance_id,
                                                               ChangeHandlers handlers);
  ~PgChangeListener();
  bool WaitUntilListening(std::chrono::milliseconds limit);
  // Idempotent; no handler runs after it returns.
  void Stop();

 private:
  PgChangeListener() = default;
  std::unique_ptr<PgListener> listener_;
};

}  // namespace sb::storage::postgres
