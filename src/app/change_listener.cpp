#include "app/change_listener.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

#include "storage/postgres/pg_change_feed.hpp"

namespace sb::app {

void ApplyChange(const ChangeTargets& t, domain::ChangeKind kind, const std::string& id) {
  switch (kind) {
    case domain::ChangeKind::kApiKeys:
      t.auth.ForgetApiKeys();
      return;
    case domain::ChangeKind::kUsers:
      t.auth.ForgetAccount(id);
      return;
    case domain::ChangeKind::kProviders:
      t.providers.ChangedElsewhere();
      return;
    case domain::ChangeKind::kPipelines: {
      std::optional<util::PipelineId> pipeline;
      if (!id.empty()) {
        auto parsed = util::PipelineId::Parse(id);
        if (!parsed) {
          spdlog::debug("ignored a pipeline change with a malformed id");
          return;
        }
        pipeline = *parsed;
      }
      // Re-reads the pipeline for the running bots: the database, so not on the listener.
      t.blocking.Post(
          [&pipelines = t.pipelines, pipeline] { pipelines.ChangedElsewhere(pipeline); });
      return;
    }
    case domain::ChangeKind::kPipelineMemory: {
      auto pipeline = util::PipelineId::Parse(id);
      if (!pipeline) {
        spdlog::debug("ignored a pipeline memory change with a malformed id");
        return;
      }
      t.blocking.Post(
          [&pipelines = t.pipelines, id = *pipeline] { pipelines.MemoryClearedElsewhere(id); });
      return;
    }
    case domain::ChangeKind::kBots:
      // BotService caches nothing; the instance owning the bot applies the change at its lease
      // scan (runtime/bot_ownership.hpp), run now rather than within its interval.
      if (t.bots_changed) t.bots_changed();
      return;
    case domain::ChangeKind::kWebhooks:
      if (t.webhooks == nullptr) return;
      t.blocking.Post([webhooks = t.webhooks] {
        if (auto r = webhooks->Load(); !r) {
          spdlog::warn("cannot reload webhooks changed by another instance: {}", r.error().message);
        }
      });
      return;
    case domain::ChangeKind::kSystem:
      t.blocking.Post([&system = t.system] {
        if (auto r = system.Load(); !r) {
          spdlog::warn("cannot reload settings changed by another instance: {}", r.error().message);
        }
      });
      return;
  }
}

void ApplyMissedChanges(const ChangeTargets& t) {
  spdlog::info(
      "change feed: reconnected; dropping every cache that other instances may have "
      "made stale meanwhile");
  ApplyChange(t, domain::ChangeKind::kApiKeys, "");
  ApplyChange(t, domain::ChangeKind::kUsers, "");
  ApplyChange(t, domain::ChangeKind::kProviders, "");
  ApplyChange(t, domain::ChangeKind::kPipelines, "");
  ApplyChange(t, domain::ChangeKind::kSystem, "");
  ApplyChange(t, domain::ChangeKind::kBots, "");
  ApplyChange(t, domain::ChangeKind::kWebhooks, "");
}

ChangeListener::~ChangeListener() {
  if (listener) listener->Stop();
}

util::Result<std::unique_ptr<ChangeListener>> StartChangeListener(
    Core& core, util::BlockingExecutor& blocking, std::function<void()> bots_changed,
    services::WebhookService* webhooks) {
  const auto& db = core.config().database;
  if (!db.postgres()) return std::unique_ptr<ChangeListener>();
  ChangeTargets targets{core.auth(), core.providers(),        core.pipelines(), core.system(),
                        blocking,    std::move(bots_changed), webhooks};
  storage::postgres::ChangeHandlers handlers;
  handlers.on_change = [targets](domain::ChangeKind kind, const std::string& id) {
    ApplyChange(targets, kind, id);
  };
  handlers.on_missed = [targets] { ApplyMissedChanges(targets); };
  auto started =
      storage::postgres::PgChangeListener::Start(db.url, core.instance_id(), std::move(handlers));
  if (!started) return tl::make_unexpected(started.error());
  auto out = std::make_unique<ChangeListener>();
  out->listener = std::move(*started);
  if (!out->listener->WaitUntilListening(std::chrono::seconds(5))) {
    spdlog::warn(
        "change feed: not listening yet; changes made through other instances show "
        "here only once it is");
  }
  return out;
}

}  // namespace sb::app
