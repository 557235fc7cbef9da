#include "platforms/common/text_units.hpp"

namespace sb::platforms::common {
namespace {

// Length in bytes of the UTF-8 sequence that starts with `lead` (1 for a stray byte).
std::size_t SequenceLength(unsigned char lead) {
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  return 1;
}

// The next code point's byte length (clamped to the text) and weight in `unit`.
std::size_t Step(std::string_view text, std::size_t pos, TextUnit unit, std::size_t& weight) {
  std::size_t len = SequenceLength(static_cast<unsigned char>(text[pos]));
  if (pos + len > text.size()) len = 1;
  weight = (unit == TextUnit::kUtf16 && len == 4) ? 2 : 1;
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

std::vector<std::string> SplitText(std::string_view text, std::size_t max_units, TextUnit unit) {
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
