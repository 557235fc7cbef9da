// Internals shared by the format readers behind ExtractText (document_text.cpp): each reader turns
// its bytes into loosely formatted text ('\n' line breaks, blank lines between paragraphs) and
// NormalizeText makes the final shape (one blank line between paragraphs, trimmed).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "knowledge/document_text.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace sb::knowledge::detail {

// When the time allowed for one document runs out; readers check it between pages and parts.
class Deadline {
 public:
  explicit Deadline(std::chrono::milliseconds budget)
      : budget_(budget), end_(std::chrono::steady_clock::now() + budget) {}
  bool Passed() const { return std::chrono::steady_clock::now() > end_; }
  util::Error Error() const;  // kPayloadTooLarge "reading the document took more than N s"

 private:
  std::chrono::milliseconds budget_;
  std::chrono::steady_clock::time_point end_;
};

// "64 MiB", "512 KiB", "100 bytes": limits named the way a person reads them.
std::string SizeText(std::size_t bytes);

using util::AppendUtf8;  // U+FFFD for a surrogate or a value past U+10FFFF

// Decodes the character reference at `s[i]` == '&' ("&amp;", "&#233;", "&#x1F600;"): appends its
// text to `out` and returns the bytes consumed, or 0 when it is not a reference we know.
std::size_t DecodeEntity(std::string_view s, std::size_t i, std::string& out);

// CRLF and lone CR become LF, other control characters a space, spaces at line ends go, blank
// lines collapse to one, and the whole is trimmed.
std::string NormalizeText(std::string_view text);

util::Result<std::string> MarkdownText(std::string_view bytes);
util::Result<std::string> HtmlText(std::string_view bytes);
util::Result<std::string> PdfText(std::string_view bytes, const DocumentLimits& limits,
                                  const Deadline& deadline);
util::Result<std::string> DocxText(std::string_view bytes, const DocumentLimits& limits,
                                   const Deadline& deadline);

}  // namespace sb::knowledge::detail
