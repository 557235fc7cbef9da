// Rules for bots: the adapter must be in the catalogue and the config must satisfy its schema;
// a bot without a pipeline gets the default one; changes reach the runtime (when one is wired
// in) only when adapter, config, enable or pipeline changed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "domain/bot.hpp"
#include "domain/bot_log.hpp"
#include "domain/bot_runtime.hpp"
#include "domain/catalogue.hpp"
#include "domain/change_feed.hpp"
#include "domain/pipeline.hpp"
#include "util/clock.hpp"

namespace sb::services {

struct BotDraft {
  std::string name;
  std::string description;
  std::string adapter;
  util::JsonObject config;
  bool enable = false;
  std::optional<util::PipelineId> use_pipeline_uuid;
  std::optional<int> log_retention;
};

struct BotPatch {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<std::string> adapter;
  std::optional<util::JsonObject> config;
  std::optional<bool> enable;
  std::optional<util::PipelineId> use_pipeline_uuid;
  std::optional<int> log_retention;
};

struct BotView {
  domain::Bot bot;
  domain::RuntimeStatus runtime;
};

struct BotServiceOptions {
  int log_retention = 1000;  // entries kept per bot without its own setting
};

// Thread-safe; blocking (call from the blocking pool).
class BotService {
 public:
  // `runtime` may be null: every bot is then reported stopped and cannot send.
  BotService(domain::BotRepository& bots, domain::BotLogRepository& logs,
             domain::PipelineRepository& pipelines, const domain::Catalogue& adapters,
             domain::BotRuntime* runtime, const util::Clock& clock, BotServiceOptions options);

  util::Result<std::vector<BotView>> List();
  util::Result<BotView> Get(const util::BotId& id);
  util::Result<util::BotId> Create(const BotDraft& draft);
  util::Result<void> Update(const util::BotId& id, const BotPatch& patch);
  util::Result<void> Delete(const util::BotId& id);

  // kNotFound for an unknown bot. Arguments are checked at the edge.
  util::Result<domain::BotLogPage> Logs(const util::BotId& id, std::int64_t from_index,
                                        int max_count);
  // Stores an entry and trims the bot's log to its retention.
  util::Result<std::int64_t> AppendLog(const domain::Bot& bot, const domain::BotLogEntry& entry);
  int LogRetentionOf(const domain::Bot& bot) const;

  // kNotFound for an unknown bot, kConflict when it is not running, then the runtime's errors.
  // Reads the bot here (blocking); `done` runs exactly once, possibly later on another thread.
  void SendMessage(const util::BotId& id, const domain::OutgoingMessage& message,
                   std::function<void(util::Result<domain::SendReceipt>)> done);

  // A platform's call to `/bots/{uuid}[/path]`: 404 for an unknown bot, 409 for a disabled or
  // stopped one, otherwise the bot's adapter answers. `answer` runs exactly once, on any thread.
  void HandlePlatformCall(const util::BotId& id, domain::PlatformCall call,
                          std::function<void(util::Result<domain::PlatformAnswer>)> answer);
  // A WebSocket upgrade on `/bots/{uuid}[/path]`, with the same refusals as HandlePlatformCall;
  // otherwise the bot's adapter accepts or refuses it. Blocking (reads a stopped bot).
  util::Result<domain::PlatformSocketHandlers> OpenPlatformSocket(
      const util::BotId& id, domain::PlatformCall call,
      std::shared_ptr<domain::PlatformSocket> socket);

  // Connects the running bots (server start, before requests are served). Not thread-safe.
  void AttachRuntime(domain::BotRuntime* runtime) { runtime_ = runtime; }
  // Where committed changes are announced to other instances (optional; set before serving).
  void SetChangeFeed(domain::ChangeFeed* feed) { feed_ = feed; }

 private:
  util::Result<void> Check(domain::Bot& bot) const;
  domain::RuntimeStatus StatusOf(const domain::Bot& bot) const;
  void Announce(const util::BotId& id);

  domain::BotRepository& bots_;
  domain::BotLogRepository& logs_;
  domain::PipelineRepository& pipelines_;
  const domain::Catalogue& adapters_;
  domain::BotRuntime* runtime_;
  domain::ChangeFeed* feed_ = nullptr;
  std::mutex changes_mu_;  // one create/update/delete (with its runtime call) at a time
  const util::Clock& clock_;
  BotServiceOptions options_;
};

}  // namespace sb::services
