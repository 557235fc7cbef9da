// Small helpers shared by the route groups: error replies, path ids, query flags.
#pragma once

#include <string_view>

#include "http/envelope.hpp"
#include "http/request.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"

namespace sb::http::api {

inline Response Fail(const Request& req, const util::Error& error) {
  return JsonError(error, req.request_id);
}

// The `{name}` path parameter as a typed id; kInvalidArgument when it is not a UUID.
template <typename Id>
util::Result<Id> PathId(const Request& req, std::string_view name) {
  return Id::Parse(req.PathParam(name), name);
}

// `?name=false` / `?name=0` turn a default-true flag off.
inline bool QueryFlag(const Request& req, std::string_view name, bool fallback) {
  auto v = req.Query(name);
  if (!v) return fallback;
  if (*v == "false" || *v == "0" || *v == "no") return false;
  if (*v == "true" || *v == "1" || *v == "yes") return true;
  return fallback;
}

}  // namespace sb::http::api
