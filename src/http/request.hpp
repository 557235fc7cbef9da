// The HTTP request and response as handlers see them: plain values, no socket, no Beast types,
// so route groups compile fast and can be called directly from tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sb::http {

// Who sent the request, as established by the router's authentication step.
struct Principal {
  enum class Kind { kAnonymous, kUser, kApiKey };
  Kind kind = Kind::kAnonymous;
  std::string username;         // kUser
  std::int64_t api_key_id = 0;  // kApiKey
};

struct Request {
  std::string method;                                        // upper case: GET, POST, ...
  std::string path;                                          // percent-decoded, without the query
  std::vector<std::pair<std::string, std::string>> query;    // decoded, in order
  std::vector<std::pair<std::string, std::string>> headers;  // names lower case
  std::string body;
  std::string remote_address;
  bool from_loopback = false;
  std::string request_id;

  // Filled by the router.
  std::vector<std::pair<std::string, std::string>> path_params;
  Principal principal;

  // Empty when absent.
  std::string_view Header(std::string_view lower_name) const;
  std::optional<std::string_view> Query(std::string_view name) const;
  // The value of `{name}` in the route template; empty when the route has none.
  std::string_view PathParam(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace sb::http
