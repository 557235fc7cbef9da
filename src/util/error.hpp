// The one set of error codes of the codebase and the Result type that carries them.
//   Result<Bot> r = repo.Get(id);
//   if (!r) return tl::make_unexpected(r.error());
//   if (r.error().code == ErrorCode::kNotFound) ...
#pragma once

#include <string>
#include <tl/expected.hpp>
#include <utility>

namespace sb::util {

enum class ErrorCode {
  kInvalidArgument,      // the caller sent something malformed or out of range
  kUnauthenticated,      // no credential, a wrong one, or the wrong kind for the route
  kPermissionDenied,     // authenticated but not allowed
  kNotFound,             // the resource does not exist
  kConflict,             // the request contradicts the current state
  kPayloadTooLarge,      // body over the configured limit
  kHeadersTooLarge,      // request headers over the configured limit
  kRateLimited,          // throttled
  kUpstreamFailed,       // an external service (provider, platform, marketplace) failed
  kUpstreamTimeout,      // an external service did not answer in time
  kUpstreamAuth,         // the external service refused our credential (bad or revoked key)
  kUpstreamNotFound,     // the external service does not know the model or resource named
  kUpstreamRateLimited,  // the external service is rate limiting us or the quota is spent
  kUpstreamUnreachable,  // DNS failure, connection refused, TLS failure
  kCancelled,            // the caller cancelled the operation
  kUnavailable,          // shutting down or overloaded
  kInternal,             // a bug or an environment failure (disk, database)
};

// Name used in logs and tests ("not_found").
const char* ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;  // a sentence a person can act on; never holds a secret
  // Set by whoever knows that trying again cannot help (a spent quota, a response over the size
  // cap), so retry logic need not guess from codes.
  bool final = false;
  // For kRateLimited and kUnavailable: when trying again may succeed (HTTP Retry-After); 0 unknown.
  int retry_after_seconds = 0;
};

template <typename T>
using Result = tl::expected<T, Error>;

// Result<void> success value: `return Ok();`
inline Result<void> Ok() { return {}; }

inline tl::unexpected<Error> Fail(ErrorCode code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}

}  // namespace sb::util
