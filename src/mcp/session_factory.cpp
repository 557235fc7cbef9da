#include "mcp/session_factory.hpp"

#include <fmt/format.h>

#include "mcp/http_session.hpp"
#include "mcp/server_config.hpp"

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
  return util::Fail(util::ErrorCode::kInvalidArgument,
                    fmt::format("mode '{}' is not supported by this build yet; only 'http' "
                                "(Streamable HTTP) is",
                                server.mode.substr(0, 32)));
}

}  // namespace sb::mcp
