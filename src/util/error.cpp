#include "util/error.hpp"

namespace sb::util {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kUnauthenticated:
      return "unauthenticated";
    case ErrorCode::kPermissionDenied:
      return "permission_denied";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kPayloadTooLarge:
      return "payload_too_large";
    case ErrorCode::kHeadersTooLarge:
      return "headers_too_large";
    case ErrorCode::kRateLimited:
      return "rate_limited";
    case ErrorCode::kUpstreamFailed:
      return "upstream_failed";
    case ErrorCode::kUpstreamTimeout:
      return "upstream_timeout";
    case ErrorCode::kUpstreamAuth:
      return "upstream_auth";
    case ErrorCode::kUpstreamNotFound:
      return "upstream_not_found";
    case ErrorCode::kUpstreamRateLimited:
      return "upstream_rate_limited";
    case ErrorCode::kUpstreamUnreachable:
      return "upstream_unreachable";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

}  // namespace sb::util
