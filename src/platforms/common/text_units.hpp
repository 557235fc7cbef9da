// Text measured and cut the way a platform counts it: Slack in characters (code points), LINE and
// Telegram in UTF-16 code units. Pure; input is UTF-8 (ill-formed bytes count as one unit each).
//   auto pieces = SplitText(reply, 5000, TextUnit::kUtf16);  // each piece within LINE's limit
//   std::size_t at = Utf16ToByteOffset(text, mention.index);   // LINE's mention offsets
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sb::platforms::common {

enum class TextUnit { kCodePoint, kUtf16 };

std::size_t TextLength(std::string_view utf8, TextUnit unit);

// Pieces of at most `max_units` each, cut after the last line break that fits, else after the
// last space, else at the last whole code point. Concatenated they give `text` back. Empty for
// empty text; `max_units` below 2 is taken as 2 (a surrogate pair must fit).
std::vector<std::string> SplitText(std::string_view text, std::size_t max_units, TextUnit unit);

// The byte offset in `utf8` where UTF-16 unit `units` starts; std::string_view::npos when that is
// past the end or inside a surrogate pair.
std::size_t Utf16ToByteOffset(std::string_view utf8, std::size_t units);

}  // namespace sb::platforms::common
