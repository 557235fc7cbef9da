// Changes made through other instances sharing the PostgreSQL database, applied to this one's
// caches: the listening end of domain::ChangeFeed (storage/postgres/pg_change_feed.hpp).
//   auto listener = StartChangeListener(core, blocking);   // null on SQLite: one instance
//   ...; listener.reset();                                   // before the blocking pool ends
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "app/core.hpp"
#include "domain/change_feed.hpp"
#include "services/webhook_service.hpp"
#include "util/blocking_executor.hpp"

namespace sb::storage::postgres {
class PgChangeListener;
}

namespace sb::app {

// What a change touches here. Memory-only invalidations run at once; those that read the
// database (pipelines, settings) go to `blocking`.
struct ChangeTargets {
  services::AuthService& auth;
  services::ProviderService& providers;
  services::PipelineService& pipelines;
  services::SystemService& system;
  util::BlockingExecutor& blocking;
  std::function<void()> bots_changed;  // the bot leases' scan, now (never blocks); may be empty
  services::WebhookService* webhooks = nullptr;  // may be null
};

void ApplyChange(const ChangeTargets& targets, domain::ChangeKind kind, const std::string& id);
// After notifications may have been lost: drops everything.
void ApplyMissedChanges(const ChangeTargets& targets);

// Holds the listener; stops it when destroyed.
class ChangeListener {
 public:
  ~ChangeListener();
  std::unique_ptr<storage::postgres::PgChangeListener> listener;
};

// Starts listening on PostgreSQL and waits up to a few seconds for LISTEN to be in place (a
// warning when it is not; it keeps trying). Null on SQLite. kInvalidArgument for a bad URL.
util::Result<std::unique_ptr<ChangeListener>> StartChangeListener(
    Core& core, util::BlockingExecutor& blocking, std::function<void()> bots_changed,
    services::WebhookService* webhooks);

}  // namespace sb::app
