// JSON-RPC 2.0 as MCP uses it (one message per line or per SSE event, no batches sent): building
// requests and notifications, and reading whatever a server sends, checked and bounded. No I/O.
//   std::string line = BuildRequest(7, "tools/list", util::JsonObject{});
//   auto m = ParseMessage(text);   // kind kInvalid carries why
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/json.hpp"

namespace sb::mcp {

// The newest revision we speak, and the older ones we accept from a server (lifecycle: the
// server answers with the version it chose; a client that does not support it disconnects).
inline constexpr std::string_view kProtocolVersion = "2025-06-18";
bool SupportedProtocolVersion(std::string_view version);

std::string BuildRequest(std::int64_t id, std::string_view method, util::JsonObject params);
std::string BuildNotification(std::string_view method, util::JsonObject params);
// Our answer to a server's request (ping gets an empty result; anything else method-not-found).
std::string BuildResult(const util::Json& id, util::JsonObject result);
std::string BuildError(const util::Json& id, int code, std::string_view message);

struct Message {
  enum class Kind { kResponse, kRequest, kNotification, kInvalid };
  Kind kind = Kind::kInvalid;
  util::Json id;                       // null for notifications
  std::optional<std::int64_t> int_id;  // ids we issue are integers
  std::string method;                  // requests and notifications
  util::Json params;
  util::Json result;  // responses without error
  bool is_error = false;
  int error_code = 0;
  std::string error_message;   // from the server, cut to 300 bytes
  std::string invalid_reason;  // kInvalid
};

Message ParseMessage(std::string_view text);

}  // namespace sb::mcp
