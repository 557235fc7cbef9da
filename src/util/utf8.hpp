// UTF-8 well-formedness (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), for
// text from strangers: manifests must be valid, and text quoted in a JSON answer is repaired
// (Boost.JSON writes a string's bytes as they are).
//   if (!util::IsValidUtf8(yaml)) return Fail(kInvalidArgument, "not UTF-8");
//   body["msg"] = util::ToValidUtf8(message_quoting_a_path);
#pragma once

#include <string>
#include <string_view>

namespace sb::util {

bool IsValidUtf8(std::string_view text);

// `text` with every ill-formed sequence replaced by U+FFFD: the longest well-formed prefix of a
// bad sequence becomes one replacement (Unicode's "maximal subpart" practice), a lone bad byte
// one too.
std::string ToValidUtf8(std::string_view text);

// Decodes the code point at byte `i` of `s` into `cp` and returns its byte length. A stray or
// truncated byte decodes as itself, one byte long, so a walk over any bytes always advances.
//   for (std::size_t i = 0; i < s.size();) { char32_t cp; i += NextCodePoint(s, i, cp); ... }
std::size_t NextCodePoint(std::string_view s, std::size_t i, char32_t& cp);

// The largest length <= max_bytes at which `text` can be cut without splitting a UTF-8
// sequence (a continuation byte is never the first one kept out).
//   text.resize(Utf8CutPoint(text, 4000));
std::size_t Utf8CutPoint(std::string_view text, std::size_t max_bytes);

// Appends the UTF-8 form of `cp`: U+FFFD for a surrogate or a value past U+10FFFF, so what it
// writes is always well-formed.
void AppendUtf8(std::string& out, char32_t cp);

}  // namespace sb::util
