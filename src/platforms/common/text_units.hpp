// Text measured and cut the way chat platforms count it: Slack and Discord in characters (code
// points), LINE and Telegram in UTF-16 code units. Pure; input is UTF-8, a stray or truncated byte
// counts as one unit. The two splitters differ in what happens to the line break or space cut at.
//   auto pieces = SplitKeepingSeparator(reply, 5000, TextUnit::kUtf16);  // LINE's limit
//   auto parts = SplitDroppingSeparator(reply, 2000);                    // Discord's limit
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/utf8.hpp"

namespace sb::platforms::common {

enum class TextUnit { kCodePoint, kUtf16 };

// Decodes the code point at byte `i` (see util/utf8.hpp).
using util::NextCodePoint;

// 2 for a code point outside the Basic Multilingual Plane, else 1.
inline std::size_t Utf16Units(char32_t cp) { return cp >= 0x10000 ? 2 : 1; }

std::size_t TextLength(std::string_view utf8, TextUnit unit);
inline std::size_t Utf16Length(std::string_view utf8) { return TextLength(utf8, TextUnit::kUtf16); }

// Where a piece is cut (both splitters): at a paragraph break (a blank line), else a line break,
// else a sentence end (". ", "! ", "? ", "。", "！", "？"), else a space — the first of those that
// lies in the second half of what fits, so no piece is needlessly short; else the first found
// anywhere in it; else at the last whole code point (never inside a UTF-8 sequence).

// Pieces of at most `max_units` each, cut as above. The separator cut at stays at the end of its
// piece, so concatenated the pieces give `text` back. Empty for empty text; `max_units` below 2 is
// taken as 2 (a surrogate pair must fit).
std::vector<std::string> SplitKeepingSeparator(std::string_view text, std::size_t max_units,
                                               TextUnit unit);

// Pieces of at most `max_units` UTF-16 units each (below 2 is taken as 2), cut as above (never at
// a piece's first byte). The paragraph break, line break or space cut at is dropped (a sentence's
// closing mark stays): concatenated with those characters the pieces give `text` back. Empty for
// empty text.
std::vector<std::string> SplitDroppingSeparator(std::string_view text, std::size_t max_units);

// SplitDroppingSeparator with each code point weighing `weight(cp)` (a placeholder that stands for
// a longer name). A code point heavier than `max` goes alone in its piece.
std::vector<std::string> SplitWeightedDroppingSeparator(
    std::string_view text, std::size_t max, const std::function<std::size_t(char32_t)>& weight);

// The byte offset in `utf8` where UTF-16 unit `units` starts; std::string_view::npos when that is
// past the end or inside a surrogate pair.
std::size_t Utf16ToByteOffset(std::string_view utf8, std::size_t units);

}  // namespace sb::platforms::common
