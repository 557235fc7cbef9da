#include "util/utf8.hpp"

#include <algorithm>

namespace sb::util {
namespace {

// The sequence starting at text[i]: its length when well-formed, else 0 with `*skip` set to the
// bytes of its longest well-formed prefix (at least 1).
std::size_t SequenceAt(std::string_view text, std::size_t i, std::size_t* skip) {
  const auto b = static_cast<unsigned char>(text[i]);
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b < 0x80) {
    return 1;
  } else if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    if (b == 0xE0) lo = 0xA0;  // overlong
    if (b == 0xED) hi = 0x9F;  // surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    if (b == 0xF0) lo = 0x90;  // overlong
    if (b == 0xF4) hi = 0x8F;  // past U+10FFFF
  }
  std::size_t good = len == 0 ? 0 : 1;
  while (good > 0 && good < len && i + good < text.size()) {
    const auto c = static_cast<unsigned char>(text[i + good]);
    if (c < (good == 1 ? lo : 0x80) || c > (good == 1 ? hi : 0xBF)) break;
    ++good;
  }
  if (len != 0 && good == len) return len;
  *skip = std::max<std::size_t>(good, 1);
  return 0;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  std::size_t skip = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = SequenceAt(text, i, &skip);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string ToValidUtf8(std::string_view text) {
  static constexpr char kReplacement[] = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(text.size());
  std::size_t skip = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (const std::size_t len = SequenceAt(text, i, &skip); len != 0) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += kReplacement;
      i += skip;
    }
  }
  return out;
}

std::size_t NextCodePoint(std::string_view s, std::size_t i, char32_t& cp) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = 1;
  if (b >= 0xF0 && b < 0xF8) {
    n = 4;
    cp = b & 0x07;
  } else if (b >= 0xE0 && b < 0xF0) {
    n = 3;
    cp = b & 0x0F;
  } else if (b >= 0xC0 && b < 0xE0) {
    n = 2;
    cp = b & 0x1F;
  } else {
    cp = b;
    return 1;
  }
  if (i + n > s.size()) {
    cp = b;
    return 1;
  }
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) {
      cp = b;
      return 1;
    }
    cp = (cp << 6) | (c & 0x3F);
  }
  return n;
}

void AppendUtf8(std::string& out, char32_t cp) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::size_t Utf8CutPoint(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace sb::util
