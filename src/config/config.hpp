// The typed configuration of a Switchboard instance: YAML file with every default, overridden
// by environment variables named SECTION__KEY (API__PORT=8080, SPACE__URL=http://...).
//   auto cfg = LoadConfig(path, environ_map);  // kInvalidArgument naming the bad key
//   WriteDefaultConfig(path);                   // first start
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace sb::config {

struct ApiConfig {
  std::string host = "0.0.0.0";
  int port = 5300;
  int io_threads = 2;        // threads running the event loop
  int blocking_threads = 4;  // threads for SQL, hashing and other blocking work
  std::size_t body_limit_bytes = 10 * 1024 * 1024;
  int header_timeout_seconds = 10;  // to receive the headers; also the longest pause in a body
  int body_timeout_seconds = 60;    // to receive a whole body
  int idle_timeout_seconds = 60;    // keep-alive connection with no request
  int shutdown_grace_seconds = 10;  // in-flight requests get this long on SIGTERM
  int max_connections_per_address = 256;  // more from one client address are closed at accept
  std::string webhook_prefix = "http://127.0.0.1:5300";
  std::string extra_webhook_prefix;
  // Where the other instances on the same database reach this one to hand it webhook calls for
  // the bots it runs (e.g. http://10.0.0.5:5300). Empty: http://127.0.0.1:<port> (one host).
  std::string instance_url;
  std::vector<std::string> cors_allow_origins;  // empty: same origin only
  // Who may open the pipeline debug chat's WebSocket WITHOUT a credential (LangBot's console
  // sends none): "loopback" and/or exact origins ("https://console.example.com"). Empty (the
  // default): nobody. docs/console.md "LangBot's console" states the risk.
  std::vector<std::string> anonymous_debug_chat;
};

// Outgoing webhooks (docs/webhooks.md).
struct WebhooksConfig {
  // How long a message waits for the webhooks' answers before its pipeline runs anyway; 0: it
  // never waits, and a receiver's skip_pipeline only stops the reply if it comes before it.
  int decision_window_ms = 0;
  int timeout_seconds = 10;  // per attempt
  int max_attempts = 4;      // network errors, 5xx and 429 are retried with backoff
  int max_pending = 1000;    // pushes in flight; more are dropped (logged, counted)
};

// MCP servers' sessions (docs/mcp.md).
struct McpConfig {
  int tool_timeout_seconds = 60;     // one tool call, end to end
  int max_result_bytes = 64 * 1024;  // tool result text handed to a model; longer is cut
  int ping_interval_seconds = 30;    // a connected server that stops answering is restarted
  int max_backoff_seconds = 60;      // restarts wait 1 s, 2 s, 4 s ... up to this
};

struct DatabaseConfig {
  // "sqlite" or "postgresql"; a postgresql:// url selects postgresql whatever this says.
  std::string backend = "sqlite";
  std::string sqlite_path = "switchboard.db";  // relative paths are inside the data directory
  // postgresql://user:password@host:port/dbname?options (libpq's URI form). Several instances
  // may share one database.
  std::string url;
  int pool_size = 8;  // PostgreSQL connections per instance

  bool postgres() const { return backend == "postgresql"; }
};

struct AuthConfig {
  int jwt_expire_seconds = 7 * 24 * 3600;
  int login_max_failures = 5;  // per client address and per account and address, in the window
  int login_window_seconds = 300;
  int max_concurrent_hashes = 0;   // password hashes at once (64 MiB each); 0: half the cores
  int login_rate_per_second = 10;  // logins checked per second over all clients; more get 429
};

struct SpaceConfig {
  std::string url = "https://space.langbot.app";
};

// Plugin processes (docs/plugins.md "Sandbox").
struct PluginsConfig {
  // "on": every plugin runs in a sandbox, and does not start where the machine cannot give one.
  // "off": plugins run as plain child processes of the server (trusted plugins only).
  std::string sandbox = "on";
  std::string bwrap_path = "/usr/bin/bwrap";
  int memory_mb = 512;     // the whole process tree of one plugin
  int max_processes = 64;  // likewise
  // GitHub's REST API, for installing plugins from release assets (docs/plugins.md "GitHub").
  std::string github_api_url = "https://api.github.com";
};

// Outbound connections to providers, platforms and the marketplace.
struct NetworkConfig {
  std::string proxy;     // "http://host:port"; empty: HTTPS_PROXY / HTTP_PROXY from the environment
  std::string no_proxy;  // hosts that skip the proxy (comma-separated); empty: NO_PROXY
  std::string ca_file;   // extra trusted CAs (PEM), for self-hosted services
  bool verify_tls = true;
};

// Calls to language models.
struct LlmConfig {
  int connect_timeout_seconds = 10;
  int request_timeout_seconds = 120;  // a whole call, streamed body included
  int idle_timeout_seconds = 60;      // longest silence inside a response
  int max_attempts = 3;               // first try plus retries (connection errors, 429, 5xx)
  std::size_t max_response_bytes = 16 * 1024 * 1024;
};

// Knowledge bases: uploads, ingestion and what the local agent gives the model.
struct KnowledgeConfig {
  std::size_t max_upload_bytes = 10 * 1024 * 1024;  // also bounded by api.body_limit_bytes
  int embedding_batch_size = 32;                    // passages per embedding call
  std::size_t context_budget_chars = 6000;          // retrieved text added to one message
};

// Running bots: how many messages go through pipelines at once and what is refused for load.
struct RuntimeConfig {
  int max_concurrent_pipelines = 64;  // runs in flight over all bots (one per session at a time)
  int max_queued_messages = 10000;    // waiting beyond that are dropped with `busy_notice`
  std::string busy_notice = "The bot is busy right now. Please try again in a moment.";
  std::vector<std::string> ban_words;  // regular expressions of the content filter
  std::string ban_word_mask = "*";
  // Conversation memory kept in memory for the next turns (the database keeps all of it).
  std::size_t conversation_cache_bytes = 32 * 1024 * 1024;
};

// Monitoring records (LangBot's /monitoring routes): written off the message path in batches.
struct MonitoringConfig {
  bool enabled = true;
  int retention_days = 30;
  int batch_size = 500;          // records per transaction
  int flush_interval_ms = 1000;  // the longest a record waits in memory
  int queue_bound = 10000;       // records waiting; more are dropped (and counted)
};

struct SystemConfig {
  bool debug = false;
  std::string edition = "community";
  bool allow_modify_login_info = true;
  bool disable_models_service = false;
  bool enable_marketplace = true;
  int bot_log_retention = 1000;
  std::string log_level = "info";
};

struct Config {
  ApiConfig api;
  DatabaseConfig database;
  AuthConfig auth;
  SpaceConfig space;
  PluginsConfig plugins;
  NetworkConfig network;
  LlmConfig llm;
  KnowledgeConfig knowledge;
  WebhooksConfig webhooks;
  RuntimeConfig runtime;
  SystemConfig system;
  MonitoringConfig monitoring;
  McpConfig mcp;
};

using Environment = std::map<std::string, std::string>;

// Reads `path` (missing file: all defaults), then applies SECTION__KEY variables of `env`.
// Unknown keys are ignored; a value of the wrong type fails with kInvalidArgument naming it.
util::Result<Config> LoadConfig(const std::string& path, const Environment& env);

// The YAML text of `config` (every key, with comments on the sections).
std::string RenderConfig(const Config& config);

// The process environment as a map.
Environment ProcessEnvironment();

}  // namespace sb::config
