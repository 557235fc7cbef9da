#include "platforms/common/text_units.hpp"

#include <algorithm>
#include <optional>

namespace sb::platforms::common {
namespace {

// The next code point's byte length and its weight in `unit`.
std::size_t Step(std::string_view text, std::size_t pos, TextUnit unit, std::size_t& weight) {
  char32_t cp;
  const std::size_t len = NextCodePoint(text, pos, cp);
  weight = unit == TextUnit::kUtf16 ? Utf16Units(cp) : 1;
  return len;
}

// Where a piece that cannot hold the rest of the text ends: the piece is window[0, end) and the
// next one starts `next` bytes after the window's start (end < next when a separator is dropped).
struct Cut {
  std::size_t end = 0;
  std::size_t next = 0;
};

// The best boundary in `window` (the longest prefix that fits): a paragraph break, else a line
// break, else a sentence end, else a space, the first of those in the window's second half (so a
// boundary near the start does not leave a tiny piece), else the first found anywhere; nullopt
// when the window has none (it is then cut at a code point). `keep` keeps the separator at the end
// of the piece; otherwise a line break or space is dropped (a sentence end never is).
std::optional<Cut> BestBoundary(std::string_view window, bool keep) {
  constexpr std::size_t npos = std::string_view::npos;
  std::optional<Cut> found[4];  // paragraph, line, sentence, space
  // A separator of `len` bytes at `at`: the piece keeps it or ends before it.
  auto separator = [&](std::size_t at, std::size_t len) -> std::optional<Cut> {
    if (at == npos) return std::nullopt;
    Cut cut = keep ? Cut{at + len, at + len} : Cut{at, at + len};
    if (cut.end == 0) return std::nullopt;
    return cut;
  };
  found[0] = separator(window.rfind("\n\n"), 2);
  found[1] = separator(window.rfind('\n'), 1);
  std::size_t sentence = npos;  // the byte just after the last sentence end
  for (std::string_view end : {". ", "! ", "? "}) {
    const std::size_t at = window.rfind(end);
    if (at != npos && (sentence == npos || at + 1 > sentence)) sentence = at + 1;
  }
  for (std::string_view end : {"\u3002", "\uFF01", "\uFF1F"}) {  // 。！？
    const std::size_t at = window.rfind(end);
    if (at != npos && (sentence == npos || at + end.size() > sentence)) sentence = at + end.size();
  }
  if (sentence != npos) {
    // After ". " the space is the separator; after "。" there is none.
    const bool spaced = sentence < window.size() && window[sentence] == ' ';
    found[2] = spaced ? separator(sentence, 1) : std::optional<Cut>(Cut{sentence, sentence});
  }
  found[3] = separator(window.rfind(' '), 1);
  for (const auto& cut : found) {
    if (cut && cut->next * 2 >= window.size()) return cut;
  }
  for (const auto& cut : found) {
    if (cut) return cut;
  }
  return std::nullopt;
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
    while (pos < text.size()) {
      std::size_t weight = 0;
      const std::size_t len = Step(text, pos, unit, weight);
      if (units + weight > max_units) break;
      units += weight;
      pos += len;
    }
    std::size_t end = pos;
    if (pos < text.size()) {
      if (auto cut = BestBoundary(text.substr(start, pos - start), true)) end = start + cut->end;
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
    if (auto cut = BestBoundary(window, false)) {
      pieces.emplace_back(window.substr(0, cut->end));
      start += cut->next;
    } else {
      pieces.emplace_back(window);
      start = fit_end;
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
