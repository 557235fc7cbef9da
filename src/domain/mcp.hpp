// MCP servers as the operator configures them (LangBot 4.9.5's `mcp_servers` row: name, enable,
// mode, extra_args) and where they are kept; the running side reports through McpRuntimeView.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "domain/llm.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::domain {

struct McpServer {
  std::string uuid;
  std::string name;  // unique; the API addresses servers by name, as LangBot does
  bool enable = false;
  std::string mode;  // "stdio", "sse" (HTTP+SSE, 2024-11-05) or "http" (Streamable HTTP)
  // stdio: command, args, env; sse/http: url, headers, timeout, ssereadtimeout. Holds secrets
  // (env values, headers): sealed at rest, masked in API answers.
  util::JsonObject extra_args;
  util::TimePoint created_at;
  util::TimePoint updated_at;
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class McpServerRepository {
 public:
  virtual ~McpServerRepository() = default;
  // Oldest first.
  virtual util::Result<std::vector<McpServer>> List() = 0;
  // kNotFound when absent.
  virtual util::Result<McpServer> FindByName(const std::string& name) = 0;
  // kConflict when the name (or uuid) is taken.
  virtual util::Result<void> Insert(const McpServer& server) = 0;
  // Replaces name, enable, mode, extra_args and updated_at. kNotFound when absent; kConflict when
  // the new name is taken.
  virtual util::Result<void> Update(const McpServer& server) = 0;
  // kNotFound when absent.
  virtual util::Result<void> Delete(const std::string& uuid) = 0;
};

// What LangBot's console shows of a running server (`runtime_info`).
struct McpToolInfo {
  std::string name;
  std::string description;
};

struct McpRuntimeInfo {
  std::string status;  // "connecting", "connected" or "error"
  std::string error_message;
  std::vector<McpToolInfo> tools;
  int restarts = 0;
};

// The running side of MCP servers, as the services see it. Thread-safe.
class McpRuntimeView {
 public:
  virtual ~McpRuntimeView() = default;
  // nullopt when no session runs under that name (disabled or unknown).
  virtual std::optional<McpRuntimeInfo> Info(const std::string& name) = 0;
  // The stored configuration changed (created, updated, enabled, disabled, deleted): sessions are
  // started, restarted or stopped to match. Never blocks on a server.
  virtual void Reload() = 0;
};

// Which MCP servers a pipeline uses: LangBot's extensions_preferences
// ({"enable_all_mcp_servers": true} by default, else the servers named in "mcp_servers").
struct McpBinding {
  bool all_servers = true;
  std::vector<std::string> servers;  // names

  static McpBinding FromPreferences(const util::JsonObject* preferences);
  // The binding a pipeline config carries under kExtensionsPreferencesKey (absent: all).
  static McpBinding FromPipelineConfig(const util::JsonObject& config);
  bool Includes(const std::string& server_name) const;
};

// The tools of the running MCP servers, as a pipeline's runner offers and calls them.
// Thread-safe; callbacks run exactly once, on any thread, and must not block.
class McpTools {
 public:
  virtual ~McpTools() = default;
  // The tools of bound, connected servers, for models with the func_call ability; a name two
  // servers offer goes to the server whose name sorts first. Never blocks.
  virtual std::vector<ToolSpec> Tools(const McpBinding& binding) = 0;
  // Runs a tool a model called; `arguments` is its JSON text. The result is text for the model
  // (a tool's own error result included, marked as such); kNotFound when no bound, connected
  // server offers it, kInvalidArgument for arguments that are not a JSON object, other codes
  // when the server failed or missed the deadline.
  virtual void CallTool(const McpBinding& binding, const std::string& name,
                        const std::string& arguments,
                        std::function<void(util::Result<std::string>)> done) = 0;
};

// Connection tests of a configuration (the console's "test" button): a background task that
// connects, lists the tools and disconnects. Thread-safe.
class McpTester {
 public:
  virtual ~McpTester() = default;
  // The id of a new task (polled at /system/tasks); its result is {"tools": [{name,
  // description}]} or its failure the reason. kInvalidArgument when the mode is not supported.
  // Blocking (writes the task row): call from the blocking pool.
  virtual util::Result<std::int64_t> StartTest(const McpServer& server) = 0;
};

}  // namespace sb::domain
