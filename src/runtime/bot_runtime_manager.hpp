// The running bots: one adapter instance per enabled bot, started, restarted and stopped as the
// bot's settings change, with every received message taken through its pipeline and the reply
// sent back through the same adapter. Implements domain::BotRuntime for the services.
//   BotRuntimeManager runtime(deps, options);
//   runtime.StartAll(bots);                      // at server start
//   runtime.Apply(bot);                          // after each change (BotService does this)
//   runtime.HandlePlatformCall(id, call, answer);  // POST /bots/{uuid}
//   runtime.StopAll(grace);                      // at shutdown
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "domain/bot.hpp"
#include "domain/bot_lease.hpp"
#include "domain/bot_log.hpp"
#include "domain/bot_runtime.hpp"
#include "domain/message_takeover.hpp"
#include "domain/monitoring.hpp"
#include "domain/pipeline.hpp"
#include "pipeline/message_driver.hpp"
#include "pipeline/pipeline_snapshot.hpp"
#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"
#include "util/blocking_executor.hpp"
#include "util/clock.hpp"
#include "util/metrics_registry.hpp"

namespace sb::runtime {

class Incarnation;

using AdapterFactory =
    std::function<std::unique_ptr<platforms::PlatformAdapter>(platforms::AdapterContext)>;

struct RuntimeOptions {
  std::string busy_notice = "The bot is busy right now. Please try again in a moment.";
  std::string webhook_prefix;  // public base URL, for adapters that register a webhook
  int default_log_retention = 1000;
  // The least time between two updates of a streamed reply (adapters that stream).
  std::chrono::milliseconds stream_interval{500};
  // How long a run waits for the takeover listener's answer before the pipeline starts anyway
  // (webhooks.decision_window_ms); 0: never waits, a late takeover only stops the reply.
  std::chrono::milliseconds takeover_window{0};
};

// Everything outlives the manager.
struct RuntimeDeps {
  boost::asio::any_io_executor executor;
  std::shared_ptr<net::HttpClient> http;
  std::shared_ptr<net::WebSocketTransport> websockets;
  util::BlockingExecutor* blocking = nullptr;
  // Takes every received message through its pipeline (scheduling, the engine, delays).
  std::shared_ptr<pipeline::MessageDriver> driver;
  pipeline::PipelineCache* pipelines = nullptr;
  domain::BotLogRepository* logs = nullptr;
  const util::Clock* clock = nullptr;
  std::map<std::string, AdapterFactory> adapters;  // by adapter name
  // Told of every received message before its pipeline runs (outgoing webhooks); may be null.
  domain::MessageTakeoverListener* takeover = nullptr;
  // Monitoring records of each message; null records nothing. Never blocks.
  domain::MonitoringSink* monitoring = nullptr;
  util::MetricsRegistry* metrics = nullptr;  // message counters; null counts nothing
};

class BotRuntimeManager final : public domain::BotRuntime {
 public:
  BotRuntimeManager(RuntimeDeps deps, RuntimeOptions options);
  ~BotRuntimeManager() override;
  BotRuntimeManager(const BotRuntimeManager&) = delete;
  BotRuntimeManager& operator=(const BotRuntimeManager&) = delete;

  std::optional<domain::RuntimeStatus> Status(const util::BotId& id) override;
  void Apply(const domain::Bot& bot) override;
  void Remove(const util::BotId& id) override;
  void Send(const util::BotId& id, const domain::OutgoingMessage& message,
            std::function<void(util::Result<domain::SendReceipt>)> done) override;

  // Outgoing webhooks: told of every received message, and may take it over (see
  // RuntimeOptions::takeover_window). Before StartAll; `listener` outlives the manager.
  void SetTakeoverListener(domain::MessageTakeoverListener* listener,
                           std::chrono::milliseconds window);

  // Several instances: asked before every message sent to a platform; null (the default) lets
  // every send through. Before StartAll; `fence` outlives the manager.
  void SetSendFence(const domain::SendFence* fence);

  // Starts every enabled bot of `bots` (server start).
  void StartAll(const std::vector<domain::Bot>& bots);

  void HandlePlatformCall(
      const util::BotId& id, domain::PlatformCall call,
      std::function<void(util::Result<domain::PlatformAnswer>)> answer) override;
  util::Result<domain::PlatformSocketHandlers> OpenPlatformSocket(
      const util::BotId& id, domain::PlatformCall call,
      std::shared_ptr<domain::PlatformSocket> socket) override;

  // The pipeline's settings changed or it was deleted: they are read afresh. Blocking.
  void PipelineChanged(const util::PipelineId& id);

  // Stops every bot and waits up to `grace` for their adapters to end. Blocking; call from a
  // thread that is neither an I/O thread nor a blocking-pool thread. Messages arriving later are
  // dropped.
  void StopAll(std::chrono::milliseconds grace);

  void CommitLogs() override;

  // Messages waiting for or in a pipeline run (metrics, tests).
  std::size_t InFlight() const;

  // The manager's state, shared with its bots' incarnations and turns; opaque outside
  // src/runtime (runtime/bot_runtime_impl.hpp).
  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace sb::runtime
