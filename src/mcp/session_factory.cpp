#include "mcp/session_factory.hpp"

#include <fmt/format.h>

#include "mcp/http_session.hpp"
#include "mcp/server_config.hpp"
#include "mcp/sse_session.hpp"
#include "mcp/stdio_session.hpp"

namespace sb::mcp {

util::Result<std::unique_ptr<Session>> MakeSession(const domain::McpServer& server,
                                                   const SessionDeps& deps) {
  if (server.mode == "http") {
    HttpTarget target = HttpTargetOf(server);
    if (target.url.empty()) {
      return util::Fail(util::ErrorCode::kInvalidArgument,
                        "extra_args.url is required for mode 'http'");
    }
    return std::unique_ptr<Session>(std::make_unique<HttpSession>(deps.http, std::move(target)));
  }
  if (server.mode == "sse") {
    SseTarget target = SseTargetOf(server);
    if (target.url.empty()) {
      return util::Fail(util::ErrorCode::kInvalidArgument,
                        "extra_args.url is required for mode 'sse'");
    }
    return std::unique_ptr<Session>(
        std::make_unique<SseSession>(deps.http, deps.executor, std::move(target)));
  }
  if (server.mode == "stdio") {
    StdioTarget target = StdioTargetOf(server);
    if (target.argv.empty()) {
      return util::Fail(util::ErrorCode::kInvalidArgument,
                        "extra_args.command is required for mode 'stdio'");
    }
    if (deps.stdio.data_root.empty()) {
      return util::Fail(util::ErrorCode::kInvalidArgument,
                        "stdio servers are not set up in this process");
    }
    return std::unique_ptr<Session>(std::make_unique<StdioSession>(
        deps.executor, std::move(target), deps.stdio, server.uuid, server.name));
  }
  return util::Fail(
      util::ErrorCode::kInvalidArgument,
      fmt::format("mode '{}' is not one of 'stdio', 'sse' and 'http'", server.mode.substr(0, 32)));
}

}  // namespace sb::mcp
