// The session for a stored server's mode (LangBot's names: "stdio", "sse", "http").
// A stdio session's process starts at Initialize, in <stdio.data_root>/<server uuid>.
//   auto session = MakeSession(server, {http, strand});
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>

#include "domain/mcp.hpp"
#include "mcp/session.hpp"
#include "mcp/stdio_session.hpp"
#include "net/http_client.hpp"
#include "util/error.hpp"

namespace sb::mcp {

// What transports need from the server process. References outlive every session made.
struct SessionDeps {
  net::HttpClient& http;
  // The executor every call of the session runs on (a strand of the I/O context).
  boost::asio::any_io_executor executor;
  // How stdio servers run (sandbox, folders, limits). Without a data_root, mode "stdio" is
  // refused; the server fills it from the config's plugins section.
  StdioSettings stdio = {};
};

// kInvalidArgument when this build does not speak the mode, or the configuration lacks what the
// mode needs (a url); the message says which.
util::Result<std::unique_ptr<Session>> MakeSession(const domain::McpServer& server,
                                                   const SessionDeps& deps);

}  // namespace sb::mcp
