// The signature checks webhook platforms share (Slack, LINE, Lark, DingTalk, WeCom ...):
// HMAC-SHA256 in hex or base64, a timestamp window against replay, and constant-time comparison.
// Pure.
//   if (!common::TimestampWithin(ts_header, clock.Now(), std::chrono::minutes(5))) return 401;
//   bool ok = util::ConstantTimeEquals("v0=" + common::HmacSha256Hex(secret, base), header);
//   bool ok = util::ConstantTimeEquals(common::HmacSha256Base64(secret, body), header);
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "util/clock.hpp"

namespace sb::platforms::common {

// Lowercase hex of HMAC-SHA256(key, data).
std::string HmacSha256Hex(std::string_view key, std::string_view data);
// Standard, padded base64 of HMAC-SHA256(key, data).
std::string HmacSha256Base64(std::string_view key, std::string_view data);
// Standard base64 (alphabet + and /, with '=' padding).
std::string Base64Encode(std::string_view bytes);

// True only when `unix_seconds` is a plain decimal number (no sign, no space, at most 12 digits)
// within `window` of `now`, either way.
bool TimestampWithin(std::string_view unix_seconds, util::TimePoint now,
                     std::chrono::seconds window);

// Percent-encoding of a URL query value: RFC 3986's unreserved characters kept, every other byte
// %XX, so a value (a secret, a session id) cannot change the query around it.
std::string QueryEscape(std::string_view value);

}  // namespace sb::platforms::common
