#include "platforms/common/signatures.hpp"

#include <charconv>
#include <cstdint>

#include "util/crypto.hpp"

namespace sb::platforms::common {

std::string HmacSha256Hex(std::string_view key, std::string_view data) {
  return util::HexEncode(util::HmacSha256(key, data));
}

std::string HmacSha256Base64(std::string_view key, std::string_view data) {
  return Base64Encode(util::HmacSha256(key, data));
}

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  auto at = [&](std::size_t k) {
    return static_cast<unsigned>(static_cast<unsigned char>(bytes[k]));
  };
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    const unsigned v = (at(i) << 16) | (rest == 2 ? at(i + 1) << 8 : 0);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

bool TimestampWithin(std::string_view unix_seconds, util::TimePoint now,
                     std::chrono::seconds window) {
  if (unix_seconds.empty() || unix_seconds.size() > 12) return false;
  std::int64_t seconds = 0;
  const char* end = unix_seconds.data() + unix_seconds.size();
  auto [ptr, ec] = std::from_chars(unix_seconds.data(), end, seconds);
  if (ec != std::errc() || ptr != end || unix_seconds.front() == '-') return false;
  const std::int64_t delta = util::ToUnixSeconds(now) - seconds;
  return delta <= window.count() && -delta <= window.count();
}

std::string QueryEscape(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace sb::platforms::common
