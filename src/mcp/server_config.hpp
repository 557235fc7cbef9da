// A stored server's extra_args (LangBot's shape) to the settings of our transports.
#pragma once

#include "domain/mcp.hpp"
#include "mcp/http_session.hpp"
#include "mcp/sse_session.hpp"
#include "mcp/stdio_session.hpp"

namespace sb::mcp {

// url, headers, timeout (seconds) of an "http" or "sse" server.
HttpTarget HttpTargetOf(const domain::McpServer& server);
// url, headers, timeout and ssereadtimeout (seconds) of an "sse" server.
SseTarget SseTargetOf(const domain::McpServer& server);
// command, args and env of a "stdio" server (argv empty without a command).
StdioTarget StdioTargetOf(const domain::McpServer& server);

}  // namespace sb::mcp
