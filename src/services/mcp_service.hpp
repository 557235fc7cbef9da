// Rules for MCP server configurations (LangBot 4.9.5's /mcp/servers): names are unique and
// path-safe, the mode is one of LangBot's three, extra_args has the shape of that mode and a
// bounded size. Secrets in extra_args (every env value, every header value) leave only masked,
// and a masked value sent back keeps the stored secret.
//   McpService mcp(storage.mcp_servers(), clock, runtime);
//   auto uuid = mcp.Create({"fs", true, "stdio", args});
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/mcp.hpp"
#include "util/clock.hpp"

namespace sb::services {

struct McpServerDraft {
  std::string name;
  bool enable = true;
  std::string mode;
  util::JsonObject extra_args;
};

// Absent fields are kept (LangBot's console toggles a server by sending only `enable`).
struct McpServerPatch {
  std::optional<std::string> name;
  std::optional<bool> enable;
  std::optional<std::string> mode;
  std::optional<util::JsonObject> extra_args;
};

// A server as the API shows it: extra_args masked, plus the running session if there is one.
struct McpServerView {
  domain::McpServer server;
  std::optional<domain::McpRuntimeInfo> runtime;
};

// Thread-safe; blocking (call from the blocking pool). `runtime` may be null (no MCP sessions
// run: runtime info is absent and changes are only stored).
class McpService {
 public:
  McpService(domain::McpServerRepository& repo, const util::Clock& clock,
             domain::McpRuntimeView* runtime);

  util::Result<std::vector<McpServerView>> List();
  // kNotFound "Server not found".
  util::Result<McpServerView> Get(const std::string& name);
  // kInvalidArgument naming the field at fault; kConflict when the name is taken.
  util::Result<std::string> Create(const McpServerDraft& draft);
  util::Result<void> Update(const std::string& name, const McpServerPatch& patch);
  util::Result<void> Delete(const std::string& name);

  // A configuration for a connection test, checked as Create would, with masked secrets filled
  // in from the stored server of the same name (the console tests an edited, unsaved form).
  util::Result<domain::McpServer> PrepareTest(const McpServerDraft& draft);
  // The task id of a connection test of `draft` (PrepareTest), or of the stored server `name`
  // when the draft has no mode. kUnavailable without a tester.
  util::Result<std::int64_t> Test(const std::string& name, const McpServerDraft& draft);
  void set_tester(domain::McpTester* tester) { tester_ = tester; }

 private:
  domain::McpServerRepository& repo_;
  const util::Clock& clock_;
  domain::McpRuntimeView* runtime_;
  domain::McpTester* tester_ = nullptr;
};

// kInvalidArgument naming the field at fault. Normalises timeouts into their bounds.
util::Result<void> CheckMcpServer(domain::McpServer& server);
// extra_args with every env and header value masked (MaskSecret).
util::JsonObject MaskMcpSecrets(util::JsonObject extra_args);
// `incoming` with each env/header value that equals the mask of the stored value of the same key
// given that stored value back.
util::JsonObject KeepMaskedMcpSecrets(util::JsonObject incoming, const util::JsonObject& stored);

}  // namespace sb::services
