#include "config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

extern char** environ;

namespace sb::config {
namespace {

using util::ErrorCode;
using util::Fail;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// "https://host" or "http://host:port": what a browser sends as Origin. No path, no userinfo.
bool IsOrigin(const std::string& value) {
  std::string_view rest(value);
  if (rest.rfind("https://", 0) == 0) {
    rest.remove_prefix(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest.remove_prefix(7);
  } else {
    return false;
  }
  if (rest.empty()) return false;
  return std::all_of(rest.begin(), rest.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']';
  });
}

// Applies one section's keys. Each Read* leaves the default when the key is absent.
class SectionReader {
 public:
  SectionReader(const YAML::Node& root, std::string section)
      : node_(root[section]), section_(std::move(section)) {}

  template <typename T>
  void Read(const char* key, T& out) {
    if (!error_.empty() || !node_ || !node_.IsMap()) return;
    const YAML::Node value = node_[key];
    if (!value || value.IsNull()) return;
    try {
      out = value.as<T>();
    } catch (const YAML::Exception&) {
      error_ = section_ + "." + key + " has the wrong type";
    }
  }

  void ReadList(const char* key, std::vector<std::string>& out) {
    if (!error_.empty() || !node_ || !node_.IsMap()) return;
    const YAML::Node value = node_[key];
    if (!value || value.IsNull()) return;
    if (value.IsScalar()) {  // from the environment: comma-separated
      out.clear();
      std::stringstream ss(value.as<std::string>());
      for (std::string item; std::getline(ss, item, ',');) {
        if (!item.empty()) out.push_back(item);
      }
      return;
    }
    Read(key, out);
  }

  const std::string& error() const { return error_; }

 private:
  YAML::Node node_;
  std::string section_;
  std::string error_;
};

}  // namespace

Environment ProcessEnvironment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

util::Result<Config> LoadConfig(const std::string& path, const Environment& env) {
  YAML::Node root;
  {
    std::ifstream in(path);
    if (in) {
      try {
        root = YAML::Load(in);
      } catch (const YAML::Exception& e) {
        return Fail(ErrorCode::kInvalidArgument,
                    "config file " + path + " is not valid YAML: " + e.what());
      }
    }
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) {
    return Fail(ErrorCode::kInvalidArgument, "config file " + path + " must hold a mapping");
  }
  for (const auto& [name, value] : env) {
    const auto sep = name.find("__");
    if (sep == std::string::npos || sep == 0 || sep + 2 >= name.size()) continue;
    const std::string section = Lower(name.substr(0, sep));
    const std::string key = Lower(name.substr(sep + 2));
    static const char* kSections[] = {"api",     "database",   "auth",      "space",    "plugins",
                                      "network", "llm",        "knowledge", "webhooks", "runtime",
                                      "system",  "monitoring", "mcp"};
    if (std::find(std::begin(kSections), std::end(kSections), section) == std::end(kSections)) {
      continue;
    }
    if (!root[section] || !root[section].IsMap()) root[section] = YAML::Node(YAML::NodeType::Map);
    root[section][key] = value;
  }

  Config c;
  std::string error;
  auto take = [&](SectionReader& r) {
    if (error.empty()) error = r.error();
  };
  SectionReader api(root, "api");
  api.Read("host", c.api.host);
  api.Read("port", c.api.port);
  api.Read("io_threads", c.api.io_threads);
  api.Read("blocking_threads", c.api.blocking_threads);
  api.Read("body_limit_bytes", c.api.body_limit_bytes);
  api.Read("header_timeout_seconds", c.api.header_timeout_seconds);
  api.Read("body_timeout_seconds", c.api.body_timeout_seconds);
  api.Read("idle_timeout_seconds", c.api.idle_timeout_seconds);
  api.Read("shutdown_grace_seconds", c.api.shutdown_grace_seconds);
  api.Read("max_connections_per_address", c.api.max_connections_per_address);
  api.Read("webhook_prefix", c.api.webhook_prefix);
  api.Read("extra_webhook_prefix", c.api.extra_webhook_prefix);
  api.Read("instance_url", c.api.instance_url);
  api.ReadList("cors_allow_origins", c.api.cors_allow_origins);
  api.ReadList("anonymous_debug_chat", c.api.anonymous_debug_chat);
  take(api);
  SectionReader db(root, "database");
  db.Read("backend", c.database.backend);
  db.Read("sqlite_path", c.database.sqlite_path);
  db.Read("url", c.database.url);
  db.Read("pool_size", c.database.pool_size);
  take(db);
  SectionReader auth(root, "auth");
  auth.Read("jwt_expire_seconds", c.auth.jwt_expire_seconds);
  auth.Read("login_max_failures", c.auth.login_max_failures);
  auth.Read("login_window_seconds", c.auth.login_window_seconds);
  auth.Read("max_concurrent_hashes", c.auth.max_concurrent_hashes);
  auth.Read("login_rate_per_second", c.auth.login_rate_per_second);
  take(auth);
  SectionReader space(root, "space");
  space.Read("url", c.space.url);
  take(space);
  SectionReader plugins(root, "plugins");
  plugins.Read("sandbox", c.plugins.sandbox);
  plugins.Read("bwrap_path", c.plugins.bwrap_path);
  plugins.Read("memory_mb", c.plugins.memory_mb);
  plugins.Read("max_processes", c.plugins.max_processes);
  plugins.Read("github_api_url", c.plugins.github_api_url);
  take(plugins);
  SectionReader net(root, "network");
  net.Read("proxy", c.network.proxy);
  net.Read("no_proxy", c.network.no_proxy);
  net.Read("ca_file", c.network.ca_file);
  net.Read("verify_tls", c.network.verify_tls);
  take(net);
  SectionReader llm(root, "llm");
  llm.Read("connect_timeout_seconds", c.llm.connect_timeout_seconds);
  llm.Read("request_timeout_seconds", c.llm.request_timeout_seconds);
  llm.Read("idle_timeout_seconds", c.llm.idle_timeout_seconds);
  llm.Read("max_attempts", c.llm.max_attempts);
  llm.Read("max_response_bytes", c.llm.max_response_bytes);
  take(llm);
  SectionReader kb(root, "knowledge");
  kb.Read("max_upload_bytes", c.knowledge.max_upload_bytes);
  kb.Read("embedding_batch_size", c.knowledge.embedding_batch_size);
  kb.Read("context_budget_chars", c.knowledge.context_budget_chars);
  take(kb);
  SectionReader wh(root, "webhooks");
  wh.Read("decision_window_ms", c.webhooks.decision_window_ms);
  wh.Read("timeout_seconds", c.webhooks.timeout_seconds);
  wh.Read("max_attempts", c.webhooks.max_attempts);
  wh.Read("max_pending", c.webhooks.max_pending);
  take(wh);
  SectionReader mcp(root, "mcp");
  mcp.Read("tool_timeout_seconds", c.mcp.tool_timeout_seconds);
  mcp.Read("max_result_bytes", c.mcp.max_result_bytes);
  mcp.Read("ping_interval_seconds", c.mcp.ping_interval_seconds);
  mcp.Read("max_backoff_seconds", c.mcp.max_backoff_seconds);
  take(mcp);
  SectionReader mon(root, "monitoring");
  mon.Read("enabled", c.monitoring.enabled);
  mon.Read("retention_days", c.monitoring.retention_days);
  mon.Read("batch_size", c.monitoring.batch_size);
  mon.Read("flush_interval_ms", c.monitoring.flush_interval_ms);
  mon.Read("queue_bound", c.monitoring.queue_bound);
  take(mon);
  SectionReader rt(root, "runtime");
  rt.Read("max_concurrent_pipelines", c.runtime.max_concurrent_pipelines);
  rt.Read("max_queued_messages", c.runtime.max_queued_messages);
  rt.Read("busy_notice", c.runtime.busy_notice);
  rt.ReadList("ban_words", c.runtime.ban_words);
  rt.Read("ban_word_mask", c.runtime.ban_word_mask);
  rt.Read("conversation_cache_bytes", c.runtime.conversation_cache_bytes);
  take(rt);
  SectionReader sys(root, "system");
  sys.Read("debug", c.system.debug);
  sys.Read("edition", c.system.edition);
  sys.Read("allow_modify_login_info", c.system.allow_modify_login_info);
  sys.Read("disable_models_service", c.system.disable_models_service);
  sys.Read("enable_marketplace", c.system.enable_marketplace);
  sys.Read("bot_log_retention", c.system.bot_log_retention);
  sys.Read("log_level", c.system.log_level);
  take(sys);
  if (!error.empty()) return Fail(ErrorCode::kInvalidArgument, "config: " + error);

  auto range = [&](bool ok, const char* what) {
    if (error.empty() && !ok) error = what;
  };
  range(c.api.port > 0 && c.api.port < 65536, "api.port must be between 1 and 65535");
  range(c.api.io_threads >= 1 && c.api.io_threads <= 64, "api.io_threads must be 1..64");
  range(c.api.blocking_threads >= 1 && c.api.blocking_threads <= 256,
        "api.blocking_threads must be 1..256");
  range(c.api.body_limit_bytes >= 1024, "api.body_limit_bytes must be at least 1024");
  range(c.api.header_timeout_seconds >= 1, "api.header_timeout_seconds must be positive");
  range(c.api.body_timeout_seconds >= 1, "api.body_timeout_seconds must be positive");
  range(c.api.idle_timeout_seconds >= 1, "api.idle_timeout_seconds must be positive");
  range(c.api.shutdown_grace_seconds >= 0, "api.shutdown_grace_seconds must not be negative");
  if (c.database.url.starts_with("postgresql://") || c.database.url.starts_with("postgres://")) {
    c.database.backend = "postgresql";
  }
  range(c.database.backend == "sqlite" || c.database.backend == "postgresql",
        "database.backend must be sqlite or postgresql");
  range(!c.database.postgres() || !c.database.url.empty(),
        "database.url (postgresql://user:password@host:port/dbname) is needed for postgresql");
  range(c.database.url.empty() || c.database.postgres(),
        "database.url must start with postgresql:// or postgres://");
  range(c.database.pool_size >= 1 && c.database.pool_size <= 256,
        "database.pool_size must be 1..256");
  range(c.auth.jwt_expire_seconds >= 60, "auth.jwt_expire_seconds must be at least 60");
  range(c.auth.login_max_failures >= 1, "auth.login_max_failures must be positive");
  range(c.auth.login_window_seconds >= 1, "auth.login_window_seconds must be positive");
  range(c.plugins.sandbox == "on" || c.plugins.sandbox == "off",
        "plugins.sandbox must be on or off");
  range(c.plugins.memory_mb >= 16 && c.plugins.memory_mb <= 1048576,
        "plugins.memory_mb must be 16..1048576");
  range(c.plugins.max_processes >= 1 && c.plugins.max_processes <= 100000,
        "plugins.max_processes must be 1..100000");
  range(c.plugins.github_api_url.starts_with("https://") ||
            c.plugins.github_api_url.starts_with("http://"),
        "plugins.github_api_url must be an http(s) URL");
  range(c.auth.max_concurrent_hashes >= 0 && c.auth.max_concurrent_hashes <= 256,
        "auth.max_concurrent_hashes must be 0..256");
  range(c.auth.login_rate_per_second >= 1 && c.auth.login_rate_per_second <= 100000,
        "auth.login_rate_per_second must be 1..100000");
  range(c.api.max_connections_per_address >= 0,
        "api.max_connections_per_address must not be negative");
  range(c.runtime.conversation_cache_bytes >= 1024 * 1024,
        "runtime.conversation_cache_bytes must be at least 1048576");
  range(c.llm.connect_timeout_seconds >= 1, "llm.connect_timeout_seconds must be positive");
  range(c.llm.request_timeout_seconds >= 1, "llm.request_timeout_seconds must be positive");
  range(c.llm.idle_timeout_seconds >= 1, "llm.idle_timeout_seconds must be positive");
  range(c.llm.max_attempts >= 1 && c.llm.max_attempts <= 10, "llm.max_attempts must be 1..10");
  range(c.llm.max_response_bytes >= 1024, "llm.max_response_bytes must be at least 1024");
  range(c.knowledge.max_upload_bytes >= 1024, "knowledge.max_upload_bytes must be at least 1024");
  range(c.knowledge.embedding_batch_size >= 1 && c.knowledge.embedding_batch_size <= 2048,
        "knowledge.embedding_batch_size must be 1..2048");
  range(c.knowledge.context_budget_chars >= 100,
        "knowledge.context_budget_chars must be at least 100");
  range(c.monitoring.retention_days >= 1 && c.monitoring.retention_days <= 3650,
        "monitoring.retention_days must be 1..3650");
  range(c.monitoring.batch_size >= 1 && c.monitoring.batch_size <= 100000,
        "monitoring.batch_size must be 1..100000");
  range(c.monitoring.flush_interval_ms >= 10 && c.monitoring.flush_interval_ms <= 600000,
        "monitoring.flush_interval_ms must be 10..600000");
  range(c.monitoring.queue_bound >= 1 && c.monitoring.queue_bound <= 10000000,
        "monitoring.queue_bound must be 1..10000000");
  range(c.network.proxy.empty() || c.network.proxy.rfind("http://", 0) == 0,
        "network.proxy must be an http:// URL");
  range(c.runtime.max_concurrent_pipelines >= 1 && c.runtime.max_concurrent_pipelines <= 100000,
        "runtime.max_concurrent_pipelines must be 1..100000");
  range(c.runtime.max_queued_messages >= 0 && c.runtime.max_queued_messages <= 10000000,
        "runtime.max_queued_messages must be 0..10000000");
  range(c.system.bot_log_retention >= 1 && c.system.bot_log_retention <= 1000000,
        "system.bot_log_retention must be 1..1000000");
  range(c.webhooks.decision_window_ms >= 0 && c.webhooks.decision_window_ms <= 60000,
        "webhooks.decision_window_ms must be 0..60000");
  range(c.webhooks.timeout_seconds >= 1 && c.webhooks.timeout_seconds <= 300,
        "webhooks.timeout_seconds must be 1..300");
  range(c.webhooks.max_attempts >= 1 && c.webhooks.max_attempts <= 10,
        "webhooks.max_attempts must be 1..10");
  range(c.webhooks.max_pending >= 1 && c.webhooks.max_pending <= 1000000,
        "webhooks.max_pending must be 1..1000000");
  range(c.mcp.tool_timeout_seconds >= 1 && c.mcp.tool_timeout_seconds <= 3600,
        "mcp.tool_timeout_seconds must be 1..3600");
  range(c.mcp.max_result_bytes >= 256 && c.mcp.max_result_bytes <= 1024 * 1024,
        "mcp.max_result_bytes must be 256..1048576");
  range(c.mcp.ping_interval_seconds >= 1 && c.mcp.ping_interval_seconds <= 3600,
        "mcp.ping_interval_seconds must be 1..3600");
  range(c.mcp.max_backoff_seconds >= 1 && c.mcp.max_backoff_seconds <= 3600,
        "mcp.max_backoff_seconds must be 1..3600");
  for (const auto& entry : c.api.anonymous_debug_chat) {
    range(entry == "loopback" || IsOrigin(entry),
          "api.anonymous_debug_chat entries must be \"loopback\" or an origin like "
          "https://console.example.com (scheme and host, no path)");
  }
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  range(std::find(std::begin(kLevels), std::end(kLevels), c.system.log_level) != std::end(kLevels),
        "system.log_level must be one of trace, debug, info, warn, error, critical, off");
  if (!error.empty()) return Fail(ErrorCode::kInvalidArgument, "config: " + error);
  return c;
}

std::string RenderConfig(const Config& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "api" << YAML::Comment("HTTP server; env API__<KEY>") << YAML::Value
      << YAML::BeginMap;
  out << YAML::Key << "host" << YAML::Value << c.api.host;
  out << YAML::Key << "port" << YAML::Value << c.api.port;
  out << YAML::Key << "io_threads" << YAML::Value << c.api.io_threads;
  out << YAML::Key << "blocking_threads" << YAML::Value << c.api.blocking_threads;
  out << YAML::Key << "body_limit_bytes" << YAML::Value << c.api.body_limit_bytes;
  out << YAML::Key << "header_timeout_seconds" << YAML::Value << c.api.header_timeout_seconds;
  out << YAML::Key << "body_timeout_seconds" << YAML::Value << c.api.body_timeout_seconds;
  out << YAML::Key << "idle_timeout_seconds" << YAML::Value << c.api.idle_timeout_seconds;
  out << YAML::Key << "shutdown_grace_seconds" << YAML::Value << c.api.shutdown_grace_seconds;
  out << YAML::Key << "max_connections_per_address" << YAML::Comment("0: no limit") << YAML::Value
      << c.api.max_connections_per_address;
  out << YAML::Key << "webhook_prefix" << YAML::Value << c.api.webhook_prefix;
  out << YAML::Key << "extra_webhook_prefix" << YAML::Value << c.api.extra_webhook_prefix;
  out << YAML::Key << "instance_url"
      << YAML::Comment("several instances: where the others reach this one; empty: loopback")
      << YAML::Value << c.api.instance_url;
  out << YAML::Key << "cors_allow_origins" << YAML::Value << YAML::Flow << c.api.cors_allow_origins;
  out << YAML::Key << "anonymous_debug_chat"
      << YAML::Comment("\"loopback\" and/or origins; empty: a credential is always required")
      << YAML::Value << YAML::Flow << c.api.anonymous_debug_chat;
  out << YAML::EndMap;
  out << YAML::Key << "database" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "backend" << YAML::Value << c.database.backend;
  out << YAML::Key << "sqlite_path" << YAML::Value << c.database.sqlite_path;
  out << YAML::Key << "url"
      << YAML::Comment("postgresql://user:password@host:port/db: PostgreSQL, shared by instances")
      << YAML::Value << c.database.url;
  out << YAML::Key << "pool_size" << YAML::Value << c.database.pool_size;
  out << YAML::EndMap;
  out << YAML::Key << "auth" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "jwt_expire_seconds" << YAML::Value << c.auth.jwt_expire_seconds;
  out << YAML::Key << "login_max_failures" << YAML::Value << c.auth.login_max_failures;
  out << YAML::Key << "login_window_seconds" << YAML::Value << c.auth.login_window_seconds;
  out << YAML::Key << "max_concurrent_hashes" << YAML::Comment("0: half the cores") << YAML::Value
      << c.auth.max_concurrent_hashes;
  out << YAML::Key << "login_rate_per_second" << YAML::Value << c.auth.login_rate_per_second;
  out << YAML::EndMap;
  out << YAML::Key << "space" << YAML::Comment("plugin marketplace") << YAML::Value
      << YAML::BeginMap;
  out << YAML::Key << "url" << YAML::Value << c.space.url;
  out << YAML::EndMap;
  out << YAML::Key << "plugins" << YAML::Comment("plugin processes: sandbox on, or off")
      << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "sandbox" << YAML::Value << c.plugins.sandbox;
  out << YAML::Key << "bwrap_path" << YAML::Value << c.plugins.bwrap_path;
  out << YAML::Key << "memory_mb" << YAML::Value << c.plugins.memory_mb;
  out << YAML::Key << "max_processes" << YAML::Value << c.plugins.max_processes;
  out << YAML::Key << "github_api_url" << YAML::Value << c.plugins.github_api_url;
  out << YAML::EndMap;
  out << YAML::Key << "network" << YAML::Comment("outbound connections") << YAML::Value
      << YAML::BeginMap;
  out << YAML::Key << "proxy" << YAML::Value << c.network.proxy;
  out << YAML::Key << "no_proxy" << YAML::Value << c.network.no_proxy;
  out << YAML::Key << "ca_file" << YAML::Value << c.network.ca_file;
  out << YAML::Key << "verify_tls" << YAML::Value << c.network.verify_tls;
  out << YAML::EndMap;
  out << YAML::Key << "llm" << YAML::Comment("model calls") << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "connect_timeout_seconds" << YAML::Value << c.llm.connect_timeout_seconds;
  out << YAML::Key << "request_timeout_seconds" << YAML::Value << c.llm.request_timeout_seconds;
  out << YAML::Key << "idle_timeout_seconds" << YAML::Value << c.llm.idle_timeout_seconds;
  out << YAML::Key << "max_attempts" << YAML::Value << c.llm.max_attempts;
  out << YAML::Key << "max_response_bytes" << YAML::Value << c.llm.max_response_bytes;
  out << YAML::EndMap;
  out << YAML::Key << "knowledge" << YAML::Comment("knowledge bases") << YAML::Value
      << YAML::BeginMap;
  out << YAML::Key << "max_upload_bytes" << YAML::Value << c.knowledge.max_upload_bytes;
  out << YAML::Key << "embedding_batch_size" << YAML::Value << c.knowledge.embedding_batch_size;
  out << YAML::Key << "context_budget_chars" << YAML::Value << c.knowledge.context_budget_chars;
  out << YAML::EndMap;
  out << YAML::Key << "webhooks" << YAML::Comment("outgoing webhooks (docs/webhooks.md)")
      << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "decision_window_ms"
      << YAML::Comment("wait this long for skip_pipeline before the pipeline runs; 0: never")
      << YAML::Value << c.webhooks.decision_window_ms;
  out << YAML::Key << "timeout_seconds" << YAML::Value << c.webhooks.timeout_seconds;
  out << YAML::Key << "max_attempts" << YAML::Value << c.webhooks.max_attempts;
  out << YAML::Key << "max_pending" << YAML::Value << c.webhooks.max_pending;
  out << YAML::EndMap;
  out << YAML::Key << "mcp" << YAML::Comment("MCP servers' sessions (docs/mcp.md)") << YAML::Value
      << YAML::BeginMap;
  out << YAML::Key << "tool_timeout_seconds" << YAML::Value << c.mcp.tool_timeout_seconds;
  out << YAML::Key << "max_result_bytes" << YAML::Value << c.mcp.max_result_bytes;
  out << YAML::Key << "ping_interval_seconds" << YAML::Value << c.mcp.ping_interval_seconds;
  out << YAML::Key << "max_backoff_seconds" << YAML::Value << c.mcp.max_backoff_seconds;
  out << YAML::EndMap;
  out << YAML::Key << "runtime" << YAML::Comment("running bots") << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "max_concurrent_pipelines" << YAML::Value
      << c.runtime.max_concurrent_pipelines;
  out << YAML::Key << "max_queued_messages" << YAML::Value << c.runtime.max_queued_messages;
  out << YAML::Key << "busy_notice" << YAML::Value << c.runtime.busy_notice;
  out << YAML::Key << "ban_words" << YAML::Value << YAML::Flow << c.runtime.ban_words;
  out << YAML::Key << "ban_word_mask" << YAML::Value << c.runtime.ban_word_mask;
  out << YAML::Key << "conversation_cache_bytes" << YAML::Value
      << c.runtime.conversation_cache_bytes;
  out << YAML::EndMap;
  out << YAML::Key << "monitoring" << YAML::Comment("monitoring records") << YAML::Value
      << YAML::BeginMap;
  out << YAML::Key << "enabled" << YAML::Value << c.monitoring.enabled;
  out << YAML::Key << "retention_days" << YAML::Value << c.monitoring.retention_days;
  out << YAML::Key << "batch_size" << YAML::Value << c.monitoring.batch_size;
  out << YAML::Key << "flush_interval_ms" << YAML::Value << c.monitoring.flush_interval_ms;
  out << YAML::Key << "queue_bound" << YAML::Value << c.monitoring.queue_bound;
  out << YAML::EndMap;
  out << YAML::Key << "system" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "debug" << YAML::Value << c.system.debug;
  out << YAML::Key << "edition" << YAML::Value << c.system.edition;
  out << YAML::Key << "allow_modify_login_info" << YAML::Value << c.system.allow_modify_login_info;
  out << YAML::Key << "disable_models_service" << YAML::Value << c.system.disable_models_service;
  out << YAML::Key << "enable_marketplace" << YAML::Value << c.system.enable_marketplace;
  out << YAML::Key << "bot_log_retention" << YAML::Value << c.system.bot_log_retention;
  out << YAML::Key << "log_level" << YAML::Value << c.system.log_level;
  out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace sb::config
