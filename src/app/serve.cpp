#include "app/serve.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>
#include <map>
#include <thread>
#include <vector>

#include "app/bot_stack.hpp"
#include "app/call_forwarder.hpp"
#include "app/change_listener.hpp"
#include "app/metrics_collectors.hpp"
#include "app/plugin_calls.hpp"
#include "http/api/api.hpp"
#include "http/auth_guard.hpp"
#include "http/console.hpp"
#include "http/console_assets.hpp"
#include "http/server.hpp"
#include "llm/gateway.hpp"
#include "llm/observed_gateway.hpp"
#include "mcp/server_tester.hpp"
#include "mcp/session_factory.hpp"
#include "mcp/session_manager.hpp"
#include "net/http_client.hpp"
#include "net/websocket.hpp"
#include "plugins/marketplace_client.hpp"
#include "plugins/plugin_manager.hpp"
#include "runtime/bot_runtime_manager.hpp"
#include "services/config_schema.hpp"
#include "services/knowledge_service.hpp"
#include "services/model_resolver.hpp"
#include "services/model_test_service.hpp"
#include "services/monitoring_recorder.hpp"
#include "services/task_claimer.hpp"
#include "services/webhook_service.hpp"
#include "util/blocking_executor.hpp"
#include "util/crypto.hpp"
#include "util/metrics_registry.hpp"
#include "webhooks/webhook_pusher.hpp"

namespace sb::app {
namespace {

// Blocking work posted from I/O-thread callbacks goes to the blocking pool.
class PoolExecutor final : public util::BlockingExecutor {
 public:
  explicit PoolExecutor(boost::asio::thread_pool& pool) : pool_(pool) {}

  void Post(std::function<void()> task) override {
    boost::asio::post(pool_, [task = std::move(task)] { RunGuarded(task); });
  }

  // The timer waits on the pool itself, so a joined pool has run every delayed task.
  void PostAfter(std::chrono::milliseconds delay, std::function<void()> task) override {
    auto timer = std::make_shared<boost::asio::steady_timer>(pool_.get_executor(), delay);
    timer->async_wait(
        [timer, task = std::move(task)](const boost::system::error_code&) { RunGuarded(task); });
  }

 private:
  // A task that throws is logged and dropped: it must not end the process.
  static void RunGuarded(const std::function<void()>& task) {
    try {
      task();
    } catch (const std::exception& e) {
      spdlog::error("background task failed: {}", e.what());
    } catch (...) {
      spdlog::error("background task failed with a non-standard exception");
    }
  }

  boost::asio::thread_pool& pool_;
};

std::vector<std::pair<std::string, std::string>> EnvironmentList() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : config::ProcessEnvironment()) out.emplace_back(k, v);
  return out;
}

}  // namespace

int Serve(const CoreOptions& options, const ServeOptions& serve_options) {
  auto opened = Core::Open(options);
  if (!opened) {
    spdlog::critical("cannot start: {}", opened.error().message);
    return 1;
  }
  Core& core = **opened;
  const auto& cfg = core.config();
  spdlog::set_level(spdlog::level::from_str(cfg.system.log_level));

  auto initialized = core.auth().IsInitialized();
  if (!initialized) {
    spdlog::critical("cannot read accounts: {}", initialized.error().message);
    return 1;
  }
  // Until an admin exists, remote clients need this code to claim the instance.
  const std::string setup_code = *initialized ? std::string() : util::RandomUrlSafe(16);

  // Tasks this instance was running when its last process died are given up, so that the task
  // claimer (started below, here or on another instance) resumes them or fails them with the
  // reason. Only `serve` does this: a CLI helper run beside a live server must not touch them.
  auto interrupted = core.tasks().ReleaseInterrupted();
  if (!interrupted) {
    spdlog::critical("cannot read tasks: {}", interrupted.error().message);
    return 1;
  }
  if (*interrupted > 0) {
    spdlog::warn("{} task(s) were interrupted by the last shutdown and are resumed", *interrupted);
  }

  // The event loop and the blocking pool come first and are torn down explicitly at the end,
  // before anything below: coroutine frames still suspended at shutdown are destroyed with the
  // io_context and may touch these objects on the way out.
  auto io = std::make_unique<boost::asio::io_context>(cfg.api.io_threads);
  boost::asio::thread_pool blocking(static_cast<std::size_t>(cfg.api.blocking_threads));
  PoolExecutor blocking_executor(blocking);

  net::HttpClientOptions client_options;
  client_options.verify_tls = cfg.network.verify_tls;
  client_options.ca_file = cfg.network.ca_file;
  client_options.proxy_url = cfg.network.proxy;
  client_options.no_proxy = cfg.network.no_proxy;
  // Busy bots keep many calls in flight to one provider or platform host; a small idle pool
  // would close and reopen connections under load.
  client_options.max_idle_per_host = 64;
  client_options = net::WithProxyFromEnvironment(client_options, EnvironmentList());
  auto http_client = net::MakeHttpClient(io->get_executor(), client_options);
  // Platform gateways and OneBot's reverse socket: the same TLS and proxy settings.
  auto websockets = net::MakeWebSocketTransport(io->get_executor(), client_options);
  llm::GatewayOptions gateway_options;
  gateway_options.max_attempts = cfg.llm.max_attempts;
  gateway_options.timeouts.connect = std::chrono::seconds(cfg.llm.connect_timeout_seconds);
  gateway_options.timeouts.total = std::chrono::seconds(cfg.llm.request_timeout_seconds);
  gateway_options.timeouts.idle = std::chrono::seconds(cfg.llm.idle_timeout_seconds);
  gateway_options.max_response_bytes = cfg.llm.max_response_bytes;
  auto gateway = std::make_shared<llm::HttpLlmGateway>(io->get_executor(), http_client,
                                                       core.requesters(), gateway_options);
  // Monitoring: the gateway seen by everything below reports each model call; the writer thread
  // keeps the records (monitoring.enabled: false leaves both out).
  util::SystemClock monitoring_clock;
  util::MetricsRegistry metrics_registry;  // /metrics beyond the HTTP counters
  std::unique_ptr<services::MonitoringRecorder> monitoring;
  if (cfg.monitoring.enabled) {
    monitoring = std::make_unique<services::MonitoringRecorder>(
        core.storage().monitoring(), monitoring_clock,
        services::MonitoringRecorderOptions{
            .queue_bound = static_cast<std::size_t>(cfg.monitoring.queue_bound),
            .batch_size = static_cast<std::size_t>(cfg.monitoring.batch_size),
            .flush_interval = std::chrono::milliseconds(cfg.monitoring.flush_interval_ms),
            .retention_days = cfg.monitoring.retention_days});
  }
  auto observed_gateway = std::make_unique<llm::ObservedLlmGateway>(
      *gateway, monitoring.get(), &metrics_registry, monitoring_clock);
  domain::LlmGateway* model_gateway = observed_gateway.get();
  services::ModelTestService model_tests(core.models(), core.providers(), core.storage().models(),
                                         *model_gateway, blocking_executor);
  services::KnowledgeOptions knowledge_options;
  knowledge_options.files_dir = core.data_dir() / "files";
  knowledge_options.max_upload_bytes = cfg.knowledge.max_upload_bytes;
  knowledge_options.embedding_batch_size =
      static_cast<std::size_t>(cfg.knowledge.embedding_batch_size);
  knowledge_options.limits.max_input_bytes = cfg.knowledge.max_upload_bytes;
  util::SystemClock knowledge_clock;
  auto knowledge = std::make_unique<services::KnowledgeService>(
      core.storage().knowledge(), core.tasks(), core.models(), *model_gateway, knowledge_clock,
      knowledge_options);
  util::SystemClock mcp_clock;
  // stdio MCP servers run in the plugins' sandbox, with its limits, each in <data>/mcp/<uuid>.
  mcp::StdioSettings mcp_stdio;
  mcp_stdio.sandbox.enabled = cfg.plugins.sandbox == "on";
  mcp_stdio.sandbox.bwrap = cfg.plugins.bwrap_path;
  mcp_stdio.sandbox.limits.memory_bytes = static_cast<std::uint64_t>(cfg.plugins.memory_mb) << 20;
  mcp_stdio.sandbox.limits.processes = static_cast<std::uint64_t>(cfg.plugins.max_processes);
  mcp_stdio.data_root = core.data_dir() / "mcp";
  mcp_stdio.protected_dir = core.data_dir();
  // MCP servers: one supervised session per enabled server; their tools reach the local agent.
  mcp::SessionManagerOptions mcp_options;
  mcp_options.tool_timeout = std::chrono::seconds(cfg.mcp.tool_timeout_seconds);
  mcp_options.max_result_bytes = static_cast<std::size_t>(cfg.mcp.max_result_bytes);
  mcp_options.ping_interval = std::chrono::seconds(cfg.mcp.ping_interval_seconds);
  mcp_options.max_backoff = std::chrono::seconds(cfg.mcp.max_backoff_seconds);
  auto mcp_sessions = std::make_unique<mcp::McpSessionManager>(
      core.storage().mcp_servers(),
      [&http_client, &mcp_stdio](const domain::McpServer& server,
                                 boost::asio::any_io_executor strand) {
        return mcp::MakeSession(server, {*http_client, std::move(strand), mcp_stdio});
      },
      io->get_executor(), mcp_options);
  services::McpService mcp_service(core.storage().mcp_servers(), mcp_clock, mcp_sessions.get());
  mcp::McpServerTester mcp_tester(*http_client, io->get_executor(), core.tasks().repository(),
                                  mcp_clock, blocking_executor, mcp_stdio);
  mcp_service.set_tester(&mcp_tester);
  auto bot_stack =
      std::make_unique<BotStack>(core, io->get_executor(), http_client, websockets, *model_gateway,
                                 blocking_executor, monitoring.get(), &metrics_registry);
  BotStack& bots = *bot_stack;

  // Outgoing webhooks: the list lives in memory (read at start, refreshed on every change), so the
  // message path never reads the database for it; delivery results are stored off the I/O threads.
  util::SystemClock webhook_clock;
  services::WebhookService webhook_service(core.storage().webhooks(), webhook_clock);
  webhook_service.SetChangeFeed(core.change_feed());
  if (auto loaded = webhook_service.Load(); !loaded) {
    spdlog::critical("cannot read webhooks: {}", loaded.error().message);
    return 1;
  }
  webhooks::WebhookPusherDeps pusher_deps;
  pusher_deps.executor = io->get_executor();
  pusher_deps.http = http_client;
  pusher_deps.enabled = [&webhook_service] { return webhook_service.Enabled(); };
  pusher_deps.record = [&webhook_service, &blocking_executor](std::int64_t id, bool ok, int status,
                                                              std::string error) {
    blocking_executor.Post([&webhook_service, id, ok, status, error = std::move(error)] {
      webhook_service.RecordDelivery(id, ok, status, error);
    });
  };
  pusher_deps.clock = &webhook_clock;
  webhooks::WebhookPusherOptions pusher_options;
  pusher_options.timeout = std::chrono::seconds(cfg.webhooks.timeout_seconds);
  pusher_options.max_attempts = cfg.webhooks.max_attempts;
  pusher_options.max_pending = static_cast<std::size_t>(cfg.webhooks.max_pending);
  auto webhook_pusher = webhooks::WebhookPusher::Make(std::move(pusher_deps), pusher_options);
  bots.SetTakeover(webhook_pusher.get(),
                   std::chrono::milliseconds(cfg.webhooks.decision_window_ms));

  util::SystemClock plugin_clock;
  auto marketplace =
      std::make_unique<plugins::MarketplaceClient>(http_client, io->get_executor(), cfg.space.url);
  plugins::GithubOptions github_options;
  github_options.api_url = cfg.plugins.github_api_url;
  auto github =
      std::make_unique<plugins::GithubClient>(http_client, io->get_executor(), github_options);
  plugins::PluginManagerDeps plugin_deps;
  plugin_deps.plugins = &core.storage().plugins();
  plugin_deps.tasks = &core.tasks().repository();
  plugin_deps.clock = &plugin_clock;
  plugin_deps.blocking = &blocking_executor;
  plugin_deps.marketplace = marketplace.get();
  plugin_deps.github = github.get();
  plugin_deps.executor = io->get_executor();
  plugin_deps.validate = services::ApplyConfigSchema;
  services::StoredModelResolver plugin_models(core.models(), core.providers());
  plugin_deps.send_message = MakeSendMessageCall(core.bots(), blocking_executor);
  plugin_deps.invoke_llm = MakeInvokeLlmCall(plugin_models, *model_gateway, blocking_executor);
  services::PluginConfigFiles plugin_config_files(core.data_dir() / "files" / "plugin_config");
  plugin_deps.get_config_file = MakeGetConfigFileCall(plugin_config_files, blocking_executor);
  plugins::PluginManagerOptions plugin_options;
  plugin_options.plugins_dir = core.data_dir() / "plugins";
  plugin_options.supervisor.data_root = plugin_options.plugins_dir;
  plugin_options.supervisor.clock = &plugin_clock;
  plugin_options.supervisor.sandbox.enabled = cfg.plugins.sandbox == "on";
  plugin_options.supervisor.sandbox.bwrap = cfg.plugins.bwrap_path;
  plugin_options.supervisor.sandbox.limits.memory_bytes =
      static_cast<std::uint64_t>(cfg.plugins.memory_mb) << 20;
  plugin_options.supervisor.sandbox.limits.processes =
      static_cast<std::uint64_t>(cfg.plugins.max_processes);
  if (!plugin_options.supervisor.sandbox.enabled) {
    spdlog::warn(
        "plugins run WITHOUT a sandbox (plugins.sandbox: off): a plugin can read this "
        "server's data directory and memory");
  }
  auto plugin_manager =
      std::make_unique<plugins::ProcessPluginManager>(std::move(plugin_deps), plugin_options);

  http::Metrics metrics;
  http::AuthGuard guard(core.auth());
  http::Router router(guard);
  std::atomic<bool> ready{false};
  std::unique_ptr<http::ConsoleFiles> console_files;
  if (serve_options.console_dir.empty()) {
    console_files = std::make_unique<http::EmbeddedConsoleFiles>(http::EmbeddedConsoleTable());
  } else {
    std::error_code ec;
    if (!std::filesystem::is_directory(serve_options.console_dir, ec)) {
      spdlog::critical("cannot start: --console-dir {} is not a directory",
                       serve_options.console_dir.string());
      return 1;
    }
    console_files = std::make_unique<http::DirectoryConsoleFiles>(serve_options.console_dir);
    spdlog::info("serving the web console from {}", serve_options.console_dir.string());
  }
  std::string console_source = "embedded";
  if (auto why = console_files->Unavailable(); !why.empty()) {
    spdlog::warn("{}", why);
    console_source = "not built";
  } else if (!serve_options.console_dir.empty()) {
    console_source = "directory " + std::filesystem::absolute(serve_options.console_dir).string();
  }
  http::api::ApiContext ctx{core.auth(),
                            core.system(),
                            core.providers(),
                            core.models(),
                            core.bots(),
                            core.pipelines(),
                            core.tasks(),
                            model_tests,
                            core.requesters(),
                            core.adapters(),
                            metrics,
                            [&ready] { return ready.load(); },
                            {cfg.api.webhook_prefix, cfg.api.extra_webhook_prefix, setup_code}};
  ctx.options.instance = {std::filesystem::absolute(core.data_dir()).string(),
                          core.config_file().string(),
                          core.database_backend(),
                          core.database_description(),
                          console_source,
                          std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count()};
  ctx.options.anonymous_debug_chat = cfg.api.anonymous_debug_chat;
  ctx.options.instance_id = core.instance_id();
  ctx.options.owned_generation = [&bots] { return bots.OwnedGeneration(); };
  ctx.options.owned_bots = [&bots] {
    std::vector<std::string> out;
    for (const auto& id : bots.OwnedBots()) out.push_back(id.str());
    return out;
  };
  if (!cfg.api.anonymous_debug_chat.empty()) {
    spdlog::warn(
        "the pipeline debug chat accepts connections WITHOUT a credential from: {} "
        "(api.anonymous_debug_chat); anyone matching can talk to every pipeline",
        fmt::join(cfg.api.anonymous_debug_chat, ", "));
  }
  ctx.debug_chat = &bots.debug_chat();
  ctx.plugins = plugin_manager.get();
  ctx.plugin_config_files = &plugin_config_files;
  ctx.knowledge = knowledge.get();
  ctx.webhooks = &webhook_service;
  ctx.mcp = &mcp_service;
  ctx.monitoring = &core.storage().monitoring();
  ctx.metrics_registry = &metrics_registry;
  AddMetricsCollectors(metrics_registry, core, bots, *plugin_manager, monitoring.get());
  // A weak reference: the registry outlives the pusher, which must go (with its HTTP client)
  // before the I/O context does.
  metrics_registry.AddCollector([weak = std::weak_ptr(webhook_pusher)](util::MetricsWriter& w) {
    auto pusher = weak.lock();
    if (!pusher) return;
    w.Header("switchboard_webhook_pushes_pending", "gauge", "Outgoing webhook pushes in flight.");
    w.Sample("switchboard_webhook_pushes_pending", {}, {}, static_cast<double>(pusher->Pending()));
    w.Header("switchboard_webhook_pushes_dropped_total", "counter",
             "Outgoing webhook pushes dropped because webhooks.max_pending were in flight.");
    w.Sample("switchboard_webhook_pushes_dropped_total", {}, {},
             static_cast<double>(pusher->Dropped()));
  });
  metrics_registry.AddCollector([sessions = mcp_sessions.get()](util::MetricsWriter& w) {
    const auto stats = sessions->Stats();
    w.Header("switchboard_mcp_servers", "gauge",
             "Enabled MCP servers by session status (connecting, connected, error).");
    std::map<std::string, int> by_status{{"connecting", 0}, {"connected", 0}, {"error", 0}};
    for (const auto& s : stats) ++by_status[s.status];
    for (const auto& [status, n] : by_status) {
      w.Sample("switchboard_mcp_servers", {"status"}, {status}, n);
    }
    w.Header("switchboard_mcp_server_restarts", "gauge",
             "Restarts of each enabled MCP server's session since it was last enabled or "
             "changed.");
    // At most 200 series, like every labelled family here: the label set stays bounded.
    for (std::size_t i = 0; i < stats.size() && i < 200; ++i) {
      w.Sample("switchboard_mcp_server_restarts", {"server"}, {stats[i].name}, stats[i].restarts);
    }
  });
  http::api::RegisterAllRoutes(router, ctx);

  const http::ConsoleHandler console(*console_files);
  router.SetFallback([&console](const http::Request& r) { return console.Handle(r); });

  http::ServerOptions server_options;
  server_options.host = cfg.api.host;
  server_options.port = static_cast<std::uint16_t>(cfg.api.port);
  server_options.body_limit_bytes = cfg.api.body_limit_bytes;
  server_options.header_timeout = std::chrono::seconds(cfg.api.header_timeout_seconds);
  server_options.body_timeout = std::chrono::seconds(cfg.api.body_timeout_seconds);
  server_options.idle_timeout = std::chrono::seconds(cfg.api.idle_timeout_seconds);
  server_options.cors_allow_origins = cfg.api.cors_allow_origins;
  server_options.max_connections_per_address =
      static_cast<std::size_t>(cfg.api.max_connections_per_address);
  auto server = std::make_unique<http::HttpServer>(*io, blocking, router, metrics, server_options);
  if (auto r = server->Start(); !r) {
    spdlog::critical("cannot start: {}", r.error().message);
    return 1;
  }

  std::promise<int> stop_signal;
  auto signals = std::make_unique<boost::asio::signal_set>(*io, SIGINT, SIGTERM);
  signals->async_wait([&](const boost::system::error_code& ec, int signo) {
    if (!ec) stop_signal.set_value(signo);
  });

  std::vector<std::thread> io_threads;
  for (int i = 0; i < cfg.api.io_threads; ++i) io_threads.emplace_back([&io] { io->run(); });
  bots.SetPluginHooks(plugin_manager.get());
  bots.SetKnowledge(knowledge.get(), cfg.knowledge.context_budget_chars);
  bots.SetMcpTools(mcp_sessions.get());
  if (auto started = knowledge->Start(); !started) {
    spdlog::error("knowledge bases: cannot resume ingestion: {}", started.error().message);
  }
  plugin_manager->Start();
  // Tasks whose owner died (another instance, or this one's last process) are claimed and run on
  // here; the leases of the tasks running here are renewed.
  util::SystemClock task_clock;
  services::TaskClaimerOptions claimer_options;
  claimer_options.instance_id = core.instance_id();
  auto resume_plugin_task = [&plugin_manager](const domain::Task& task) {
    return plugin_manager->Resume(task);
  };
  services::TaskClaimer task_claimer(
      core.storage().tasks(), task_clock,
      {{"plugin-install", resume_plugin_task},
       {"plugin-upgrade", resume_plugin_task},
       {"plugin-delete", resume_plugin_task},
       {"knowledge-store-file",
        [&knowledge](const domain::Task& task) { return knowledge->Resume(task); }}},
      claimer_options);
  task_claimer.Start();
  mcp_sessions->Start();
  runtime::OwnershipOptions ownership;
  ownership.instance_id = core.instance_id();
  ownership.instance_url = cfg.api.instance_url.empty()
                               ? fmt::format("http://127.0.0.1:{}", server->port())
                               : cfg.api.instance_url;
  ownership.forward = MakeCallForwarder(io->get_executor(), http_client, core.instance_id());
  ownership.forwarded_header = kForwardedByHeader;
  bots.Start(std::move(ownership));
  // Other instances' changes reach this one's caches (PostgreSQL; null on SQLite).
  std::unique_ptr<ChangeListener> change_listener;
  if (auto started = StartChangeListener(
          core, blocking_executor, [&bots] { bots.BotsChangedElsewhere(); }, &webhook_service);
      started) {
    change_listener = std::move(*started);
  } else {
    spdlog::error("changes made through other instances will not reach this one: {}",
                  started.error().message);
  }
  ready = true;

  const std::string host =
      cfg.api.host == "0.0.0.0" || cfg.api.host == "::" ? "127.0.0.1" : cfg.api.host;
  fmt::print("Switchboard {} listening on {}:{}\n", core.system().Info().version, cfg.api.host,
             server->port());
  fmt::print("Console: http://{}:{}/\n", host, server->port());
  if (core.first_start()) {
    fmt::print("Recovery key (shown once; keep it to reset the admin password): {}\n",
               core.recovery_key());
  }
  if (!setup_code.empty()) {
    fmt::print(
        "No admin account yet. Create it from this machine (POST /api/v1/user/init), or "
        "remotely with setup code: {}\n",
        setup_code);
  }
  std::fflush(stdout);

  const int signo = stop_signal.get_future().get();
  spdlog::info("signal {} received: stopping", signo);
  ready = false;
  server->StopAccepting();
  if (!server->WaitIdle(std::chrono::seconds(cfg.api.shutdown_grace_seconds))) {
    spdlog::warn("requests still running after {} s; cancelling model calls and closing them",
                 cfg.api.shutdown_grace_seconds);
    // Requests waiting on a provider end with a 503 rather than being cut without an answer.
    gateway->CancelAll();
    server->WaitIdle(std::chrono::seconds(2));
  }
  change_listener.reset();  // it posts to the blocking pool
  // Bots stop after the API (a webhook call in flight still finds its bot), closing every
  // platform connection; pipeline runs still waiting on a model end with the gateway's cancel.
  webhook_pusher->Stop();
  bots.Stop(std::chrono::seconds(cfg.api.shutdown_grace_seconds));
  mcp_sessions->Stop(std::chrono::seconds(3));
  task_claimer.Stop();  // nothing more is claimed; unfinished tasks' leases lapse
  knowledge->Stop();    // a file being ingested stays "processing" and is resumed through its task
  plugin_manager->Stop();
  gateway->CancelAll();
  server->CloseConnections();
  io->stop();
  for (auto& t : io_threads) t.join();
  blocking.join();
  bots.Flush();                        // log entries and conversation turns queued by the last runs
  if (monitoring) monitoring->Stop();  // writes the records still queued
  // Every object that holds a socket, timer, signal set or strand of the I/O context is destroyed
  // before the context: their destructors deregister from its services, which die with it (under
  // AddressSanitizer each SIGTERM ended in a heap-use-after-free here). Plain objects that
  // suspended coroutines may still point at (router, metrics, core, ...) stay until the end.
  bot_stack.reset();  // runners, adapters and their timers
  webhook_pusher.reset();
  knowledge.reset();
  plugin_manager.reset();  // its supervisor's timers and processes
  marketplace.reset();     // shares the HTTP client
  github.reset();          // likewise
  signals.reset();
  server.reset();
  // The HTTP client's pooled keep-alive connections own sockets and strands; the gateway and the
  // marketplace held the last references. A call still suspended keeps its own reference and
  // releases it when the context destroys its frame, while the context's services still exist.
  gateway.reset();
  http_client.reset();
  websockets.reset();
  io.reset();  // destroys what was left suspended, while everything it may touch still exists
  mcp_sessions.reset();  // after the frames of its sessions' coroutines
  observed_gateway.reset();
  monitoring.reset();
  core.Close();
  spdlog::info("stopped cleanly");
  return 0;
}

}  // namespace sb::app
