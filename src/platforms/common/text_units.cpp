#include "platforms/common/text_units.hpp"

#include <algorithm>

namespace sb::platforms::common {
namespace {

// The next code point's byte length and its weight in `unit`.
std::size_t Step(std::string_view text, std::size_t pos, TextUnit unit, std::size_t& weight) {
  char32_t cp;
  const std::size_t len = NextCodePoint(text, pos, cp);
  weight = unit == TextUnit::kUtf16 ? Utf16Units(cp) : 1;
  return len;
}

}  // namespace

std::size_t TextLength(std::string_view utf8, TextUnit unit) {
  std::size_t total = 0;
  for (std::size_t pos = 0; pos < utf8.size();) {
    std::size_t weight = 0;
    pos += Step(utf8, pos, unit, weight);
    total += weight;
  }
  return total;
}

std::vector<std::string> SplitKeepingSeparator(std::string_view text, std::size_t max_units,
                                               TextUnit unit) {
  if (max_units < 2) max_units = 2;
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t pos = start;
    std::size_t units = 0;
    std::size_t last_newline = std::string_view::npos;  // byte just after it
    std::size_t last_space = std::string_view::npos;
    while (pos < text.size()) {
      std::size_t weight = 0;
      const std::size_t len = Step(text, pos, unit, weight);
      if (units + weight > max_units) break;
      units += weight;
      if (text[pos] == '\n') last_newline = pos + 1;
      if (text[pos] == ' ') last_space = pos + 1;
      pos += len;
    }
    std::size_t end = pos;
    if (pos < text.size()) {
      if (last_newline != std::string_view::npos) {
        end = last_newline;
      } else if (last_space != std::string_view::npos) {
        end = last_space;
      }
    }
    pieces.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return pieces;
}

std::vector<std::string> SplitWeightedDroppingSeparator(
    std::string_view text, std::size_t max, const std::function<std::size_t(char32_t)>& weight) {
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

std::vector<std::string> SplitDroppingSeparator(std::string_view text, std::size_t max_units) {
  return SplitWeightedDroppingSeparator(text, std::max<std::size_t>(max_units, 2), Utf16Units);
}

std::size_t Utf16ToByteOffset(std::string_view utf8, std::size_t units) {
  std::size_t pos = 0;
  std::size_t seen = 0;
  while (seen < units && pos < utf8.size()) {
    std::size_t weight = 0;
    pos += Step(utf8, pos, TextUnit::kUtf16, weight);
    seen += weight;
  }
  if (seen != units) return std::string_view::npos;
  return pos;
}

}  // namespace sb::platforms::common
