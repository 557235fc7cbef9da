// Text measured and cut the way chat platforms count it: Telegram counts UTF-16 code units, Discord
// characters (at most one UTF-16 unit each, so a UTF-16 cut is always within its limit too).
//   if (Utf16Length(text) > 2000) pieces = SplitText(text, 2000);
//   // each piece <= 2000 units, cut after a line break, else a space, else a whole code point
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::platforms::common {

// Decodes the code point at byte `i` of `s` into `cp` and returns its byte length. A stray or
// truncated byte decodes as itself, one byte long, so the walk always advances.
std::size_t NextCodePoint(std::string_view s, std::size_t i, char32_t& cp);

// 2 for a code point outside the Basic Multilingual Plane, else 1.
inline std::size_t Utf16Units(char32_t cp) { return cp >= 0x10000 ? 2 : 1; }

std::size_t Utf16Length(std::string_view utf8);

// Pieces of at most `max_units` UTF-16 units each (at least 2 is assumed), cut after the last line
// break that fits, else the last space, else at the last whole code point; the line break or space
// cut at is dropped. Concatenated with those characters they give `text` back. Empty for empty
// text.
std::vector<std::string> SplitText(std::string_view text, std::size_t max_units);

// The same with each code point weighing `weight(cp)` (a placeholder that stands for a longer
// name). A code point heavier than `max` goes alone in its piece.
std::vector<std::string> SplitWeighted(std::string_view text, std::size_t max,
                                       const std::function<std::size_t(char32_t)>& weight);

}  // namespace sb::platforms::common
