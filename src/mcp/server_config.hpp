// A stored server's extra_args (LangBot's shape) to the settings of our transports.
#pragma once

#include "domain/mcp.hpp"
#include "mcp/http_session.hpp"

namespace sb::mcp {

// url, headers, timeout (seconds) of an "http" or "sse" server.
HttpTarget HttpTargetOf(const domain::McpServer& server);

}  // namespace sb::mcp
