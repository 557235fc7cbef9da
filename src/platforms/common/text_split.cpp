#include "platforms/common/text_split.hpp"

#include <algorithm>

namespace sb::platforms::common {

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

std::size_t Utf16Length(std::string_view utf8) {
  std::size_t units = 0;
  for (std::size_t i = 0; i < utf8.size();) {
    char32_t cp;
    i += NextCodePoint(utf8, i, cp);
    units += Utf16Units(cp);
  }
  return units;
}

std::vector<std::string> SplitWeighted(std::string_view text, std::size_t max,
                                       const std::function<std::size_t(char32_t)>& weight) {
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t used = 0;
    std::size_t fit_end = start;  // end of the longest prefix within `max`
    while (fit_end < text.size()) {
      char32_t cp;
      const std::size_t n = NextCodePoint(text, fit_end, cp);
      const std::size_t w = weight(cp);
      if (used + w > max) break;
      used += w;
      fit_end += n;
    }
    if (fit_end == text.size()) {
      pieces.emplace_back(text.substr(start));
      break;
    }
    if (fit_end == start) {  // one code point heavier than `max`: it goes alone
      char32_t cp;
      fit_end += NextCodePoint(text, start, cp);
      pieces.emplace_back(text.substr(start, fit_end - start));
      start = fit_end;
      continue;
    }
    const std::string_view window = text.substr(start, fit_end - start);
    std::size_t cut = window.rfind('\n');
    if (cut == std::string_view::npos || cut == 0) cut = window.rfind(' ');
    if (cut == std::string_view::npos || cut == 0) {
      pieces.emplace_back(window);
      start = fit_end;
    } else {
      pieces.emplace_back(window.substr(0, cut));
      start += cut + 1;
    }
  }
  return pieces;
}

std::vector<std::string> SplitText(std::string_view text, std::size_t max_units) {
  return SplitWeighted(text, std::max<std::size_t>(max_units, 2), Utf16Units);
}

}  // namespace sb::platforms::common
