// Everything that makes bots talk, built once by `serve` on top of the core: the model resolver,
// the local-agent runner, the pipeline engine with its rate limiter and ban-word filter, the
// adapters by name and the runtime that runs them. Torn down in reverse order.
//   BotStack bots(core, io.get_executor(), http_client, websockets, gateway, blocking_executor);
//   bots.Start();   // attaches the runtime and starts every enabled bot
//   bots.Stop(grace); ... bots.Flush();
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <memory>
#include <vector>

#include "app/core.hpp"
#include "domain/debug_chat.hpp"
#include "domain/knowledge.hpp"
#include "domain/llm.hpp"
#include "domain/mcp.hpp"
#include "domain/message_takeover.hpp"
#include "domain/monitoring.hpp"
#include "domain/plugin_hooks.hpp"
#include "runtime/bot_ownership.hpp"
#include "util/blocking_executor.hpp"
#include "util/metrics_registry.hpp"

namespace sb::net {
class HttpClient;
class WebSocketTransport;
}  // namespace sb::net
namespace sb::runtime {
class BotRuntimeManager;
}

namespace sb::app {

class BotStack {
 public:
  BotStack(Core& core, boost::asio::any_io_executor executor, std::shared_ptr<net::HttpClient> http,
           std::shared_ptr<net::WebSocketTransport> websockets, domain::LlmGateway& gateway,
           util::BlockingExecutor& blocking, domain::MonitoringSink* monitoring = nullptr,
           util::MetricsRegistry* metrics = nullptr);
  ~BotStack();

  // Attaches the runtime, behind bot leases (runtime/bot_ownership.hpp), to the services and
  // starts every enabled bot whose lease this instance can take. Errors are logged.
  void Start(runtime::OwnershipOptions ownership);
  // The bots whose leases this instance holds (none before Start).
  std::vector<util::BotId> OwnedBots() const;
  std::uint64_t OwnedGeneration() const;
  // Another instance changed a bot: look at the leases and settings now (no-op before Start).
  void BotsChangedElsewhere();
  // Detaches the runtime and stops every bot, waiting up to `grace` for their connections.
  void Stop(std::chrono::milliseconds grace);

  // Writes the event-log entries and conversation turns still queued, on the calling thread
  // (at shutdown, once the pools are joined).
  void Flush();

  // Plugins reach both the bots' pipelines and the debug chat. Before Start; outlives the stack.
  void SetPluginHooks(domain::PluginHooks* hooks);
  // MCP servers' tools for the local agent of bots and the debug chat; before Start.
  void SetMcpTools(domain::McpTools* tools);
  // Knowledge bases for the local agent of bots and the debug chat; before Start.
  void SetKnowledge(domain::KnowledgeRetriever* retriever, std::size_t budget_chars);

  // Outgoing webhooks see every message bots receive; before Start.
  void SetTakeover(domain::MessageTakeoverListener* listener, std::chrono::milliseconds window);

  runtime::BotRuntimeManager& runtime();
  domain::DebugChat& debug_chat();

 private:
  struct Parts;
  Core& core_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace sb::app
