#include "services/bot_service.hpp"

#include <fmt/format.h>

#include "services/config_schema.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;
using util::Fail;

constexpr int kMaxLogRetention = 1000000;

util::Error NotFound(const util::BotId& id) {
  return {ErrorCode::kNotFound, fmt::format("bot {} does not exist", id.str())};
}

}  // namespace

BotService::BotService(domain::BotRepository& bots, domain::BotLogRepository& logs,
                       domain::PipelineRepository& pipelines, const domain::Catalogue& adapters,
                       domain::BotRuntime* runtime, const util::Clock& clock,
                       BotServiceOptions options)
    : bots_(bots),
      logs_(logs),
      pipelines_(pipelines),
      adapters_(adapters),
      runtime_(runtime),
      clock_(clock),
      options_(options) {}

util::Result<void> BotService::Check(domain::Bot& bot) const {
  if (bot.name.empty() || bot.name.size() > 255) {
    return Fail(ErrorCode::kInvalidArgument,
                "name must be a non-empty string of at most 255 bytes");
  }
  if (bot.log_retention && (*bot.log_retention < 1 || *bot.log_retention > kMaxLogRetention)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("log_retention must be between 1 and {}", kMaxLogRetention));
  }
  if (bot.description.size() > 4096) {
    return Fail(ErrorCode::kInvalidArgument, "description must be at most 4096 bytes");
  }
  const domain::CatalogueEntry* adapter = adapters_.Find(bot.adapter);
  if (!adapter) {
    return Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("adapter '{}' is not a known adapter (see GET /api/v1/platform/adapters)",
                    bot.adapter.substr(0, 64)));
  }
  auto config =
      ApplyConfigSchema(domain::ConfigItems(adapter->descriptor), bot.adapter_config, "config");
  if (!config) return tl::unexpected(config.error());
  bot.adapter_config = std::move(*config);
  if (!bot.use_pipeline_uuid) {
    auto def = pipelines_.GetDefault();
    if (!def) return tl::unexpected(def.error());
    bot.use_pipeline_uuid = def->uuid;
  }
  return util::Ok();
}

domain::RuntimeStatus BotService::StatusOf(const domain::Bot& bot) const {
  if (runtime_) {
    if (auto s = runtime_->Status(bot.uuid)) return *s;
  }
  domain::RuntimeStatus s;
  s.since = bot.updated_at;
  return s;
}

util::Result<std::vector<BotView>> BotService::List() {
  auto bots = bots_.List();
  if (!bots) return tl::unexpected(bots.error());
  std::vector<BotView> out;
  out.reserve(bots->size());
  for (auto& b : *bots) {
    auto status = StatusOf(b);
    out.push_back({std::move(b), std::move(status)});
  }
  return out;
}

util::Result<BotView> BotService::Get(const util::BotId& id) {
  auto b = bots_.Get(id);
  if (!b) {
    if (b.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
    return tl::unexpected(b.error());
  }
  auto status = StatusOf(*b);
  return BotView{std::move(*b), std::move(status)};
}

util::Result<util::BotId> BotService::Create(const BotDraft& draft) {
  domain::Bot bot;
  bot.uuid = util::BotId::Generate();
  bot.name = draft.name;
  bot.description = draft.description;
  bot.adapter = draft.adapter;
  bot.adapter_config = draft.config;
  bot.enable = draft.enable;
  bot.use_pipeline_uuid = draft.use_pipeline_uuid;
  bot.log_retention = draft.log_retention;
  bot.created_at = bot.updated_at = clock_.Now();
  if (auto ok = Check(bot); !ok) return tl::unexpected(ok.error());
  std::lock_guard changes(changes_mu_);
  if (auto r = bots_.Insert(bot); !r) {
    if (r.error().code == ErrorCode::kInvalidArgument) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("use_pipeline_uuid {} names no pipeline",
                                                           bot.use_pipeline_uuid->str()));
    }
    return tl::unexpected(r.error());
  }
  if (runtime_) runtime_->Apply(bot);
  Announce(bot.uuid);
  return bot.uuid;
}

util::Result<void> BotService::Update(const util::BotId& id, const BotPatch& patch) {
  // Read, write and tell the runtime as one step: a concurrent update or delete must not leave
  // the runtime running settings the database no longer holds.
  std::lock_guard changes(changes_mu_);
  auto current = bots_.Get(id);
  if (!current) {
    if (current.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
    return tl::unexpected(current.error());
  }
  domain::Bot bot = *current;
  if (patch.name) bot.name = *patch.name;
  if (patch.description) bot.description = *patch.description;
  if (patch.adapter) bot.adapter = *patch.adapter;
  if (patch.config) {
    bot.adapter_config = *patch.config;
    // A console that edits what a masked GET showed sends the masks back: they mean "unchanged".
    const domain::CatalogueEntry* adapter = adapters_.Find(current->adapter);
    if (adapter && bot.adapter == current->adapter) {
      bot.adapter_config =
          KeepMaskedSecrets(domain::ConfigItems(adapter->descriptor), std::move(bot.adapter_config),
                            current->adapter_config);
    }
  }
  if (patch.enable) bot.enable = *patch.enable;
  if (patch.use_pipeline_uuid) bot.use_pipeline_uuid = *patch.use_pipeline_uuid;
  if (patch.log_retention) bot.log_retention = *patch.log_retention;
  bot.updated_at = clock_.Now();
  if (auto ok = Check(bot); !ok) return ok;
  if (auto r = bots_.Update(bot); !r) {
    if (r.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
    if (r.error().code == ErrorCode::kInvalidArgument) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("use_pipeline_uuid {} names no pipeline",
                                                           bot.use_pipeline_uuid->str()));
    }
    return r;
  }
  const bool runtime_relevant =
      bot.adapter != current->adapter || bot.adapter_config != current->adapter_config ||
      bot.enable != current->enable || bot.use_pipeline_uuid != current->use_pipeline_uuid;
  // The runtime also learns a new log retention, the one setting a running bot reads.
  if (runtime_ && (runtime_relevant || bot.log_retention != current->log_retention)) {
    runtime_->Apply(bot);
  }
  Announce(bot.uuid);
  return util::Ok();
}

util::Result<void> BotService::Delete(const util::BotId& id) {
  std::lock_guard changes(changes_mu_);
  auto r = bots_.Delete(id);
  if (!r) {
    if (r.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
    return r;
  }
  if (runtime_) runtime_->Remove(id);
  Announce(id);
  return util::Ok();
}

void BotService::Announce(const util::BotId& id) {
  if (feed_ != nullptr) feed_->Publish(domain::ChangeKind::kBots, id.str());
}

util::Result<domain::BotLogPage> BotService::Logs(const util::BotId& id, std::int64_t from_index,
                                                  int max_count) {
  auto bot = bots_.Get(id);
  if (!bot) {
    if (bot.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
    return tl::unexpected(bot.error());
  }
  // Entries are written in group commits; a reader must still see what already happened.
  if (runtime_) runtime_->CommitLogs();
  return logs_.Page(id, from_index, max_count);
}

int BotService::LogRetentionOf(const domain::Bot& bot) const {
  return bot.log_retention.value_or(options_.log_retention);
}

util::Result<std::int64_t> BotService::AppendLog(const domain::Bot& bot,
                                                 const domain::BotLogEntry& entry) {
  return logs_.Append(bot.uuid, entry, LogRetentionOf(bot));
}

void BotService::SendMessage(const util::BotId& id, const domain::OutgoingMessage& message,
                             std::function<void(util::Result<domain::SendReceipt>)> done) {
  auto bot = bots_.Get(id);
  if (!bot) {
    if (bot.error().code == ErrorCode::kNotFound) return done(tl::unexpected(NotFound(id)));
    return done(tl::unexpected(bot.error()));
  }
  const auto status = StatusOf(*bot);
  if (!runtime_ || status.state != domain::RuntimeState::kRunning) {
    return done(Fail(ErrorCode::kConflict, fmt::format("bot {} is not running", id.str())));
  }
  runtime_->Send(id, message, std::move(done));
}

void BotService::HandlePlatformCall(
    const util::BotId& id, domain::PlatformCall call,
    std::function<void(util::Result<domain::PlatformAnswer>)> answer) {
  // A running bot is known to the runtime: no database read on the message path.
  if (runtime_) {
    if (auto status = runtime_->Status(id);
        status && status->state != domain::RuntimeState::kStopped) {
      return runtime_->HandlePlatformCall(id, std::move(call), std::move(answer));
    }
  }
  auto bot = bots_.Get(id);
  if (!bot) {
    if (bot.error().code == ErrorCode::kNotFound) return answer(tl::unexpected(NotFound(id)));
    return answer(tl::unexpected(bot.error()));
  }
  if (!bot->enable) {
    return answer(Fail(ErrorCode::kConflict, fmt::format("bot {} is disabled", id.str())));
  }
  if (!runtime_) {
    return answer(Fail(ErrorCode::kConflict, fmt::format("bot {} is not running", id.str())));
  }
  runtime_->HandlePlatformCall(id, std::move(call), std::move(answer));
}

util::Result<domain::PlatformSocketHandlers> BotService::OpenPlatformSocket(
    const util::BotId& id, domain::PlatformCall call,
    std::shared_ptr<domain::PlatformSocket> socket) {
  if (runtime_) {
    if (auto status = runtime_->Status(id);
        status && status->state != domain::RuntimeState::kStopped) {
      return runtime_->OpenPlatformSocket(id, std::move(call), std::move(socket));
    }
  }
  auto bot = bots_.Get(id);
  if (!bot) {
    if (bot.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
    return tl::unexpected(bot.error());
  }
  if (!bot->enable) return Fail(ErrorCode::kConflict, fmt::format("bot {} is disabled", id.str()));
  if (!runtime_) return Fail(ErrorCode::kConflict, fmt::format("bot {} is not running", id.str()));
  return runtime_->OpenPlatformSocket(id, std::move(call), std::move(socket));
}

}  // namespace sb::services
