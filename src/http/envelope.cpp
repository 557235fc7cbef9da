#include "http/envelope.hpp"

#include <spdlog/spdlog.h>

#include "util/log_text.hpp"
#include "util/utf8.hpp"

namespace sb::http {

int HttpStatusFor(util::ErrorCode code) {
  using util::ErrorCode;
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kConflict:
      return 409;
    case ErrorCode::kPayloadTooLarge:
      return 413;
    case ErrorCode::kHeadersTooLarge:
      return 431;
    case ErrorCode::kRateLimited:
      return 429;
    case ErrorCode::kUpstreamFailed:
    case ErrorCode::kUpstreamAuth:
    case ErrorCode::kUpstreamNotFound:
    case ErrorCode::kUpstreamRateLimited:
    case ErrorCode::kUpstreamUnreachable:
      return 502;
    case ErrorCode::kUnavailable:
    case ErrorCode::kCancelled:
      return 503;
    case ErrorCode::kUpstreamTimeout:
      return 504;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

Response JsonOk(const util::Json& data) {
  Response r;
  r.body.reserve(256);
  r.body = "{\"code\":0,\"msg\":\"ok\",\"data\":";
  util::AppendJson(r.body, data);
  r.body += '}';
  return r;
}

Response JsonOkNoData() {
  Response r;
  r.body = "{\"code\":0,\"msg\":\"ok\",\"data\":null}";
  return r;
}

Response JsonError(const util::Error& error, std::string_view request_id) {
  Response r;
  r.status = HttpStatusFor(error.code);
  boost::json::object body;
  body["code"] = r.status < 500 ? -1 : -2;
  if (r.status == 500) {
    // The client gets only the request id; the cause goes to the log (messages hold no secrets).
    spdlog::error("request {} failed: {}", util::EscapeForLog(request_id),
                  util::EscapeForLog(error.message));
    body["msg"] = "internal error; request id " + std::string(request_id);
    body["request_id"] = request_id;
  } else {
    // Messages may quote the client's own bytes (a path with %FF): the answer stays valid JSON.
    body["msg"] = util::ToValidUtf8(error.message);
  }
  r.body = util::SerializeJson(body);
  if (error.retry_after_seconds > 0) {
    r.headers.emplace_back("Retry-After", std::to_string(error.retry_after_seconds));
  }
  return r;
}

}  // namespace sb::http
