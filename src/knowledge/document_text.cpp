// Document types, the dispatch to the format readers, plain text, and the final text shape.
#include "knowledge/document_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "knowledge/document_text_internal.hpp"
#include "util/utf8.hpp"

namespace sb::knowledge {
namespace {

using util::ErrorCode;
using util::Fail;

constexpr std::array<DocumentType, 5> kAllTypes = {DocumentType::kText, DocumentType::kMarkdown,
                                                   DocumentType::kHtml, DocumentType::kPdf,
                                                   DocumentType::kDocx};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// UTF-16 with a byte order mark (what Windows Notepad saves as "Unicode") becomes UTF-8; a lone
// surrogate becomes U+FFFD. Returns false when `bytes` is not UTF-16 with a BOM.
bool Utf16WithBomToUtf8(std::string_view bytes, std::string& out) {
  if (bytes.size() < 2) return false;
  const auto b0 = static_cast<unsigned char>(bytes[0]);
  const auto b1 = static_cast<unsigned char>(bytes[1]);
  bool little;
  if (b0 == 0xFF && b1 == 0xFE) {
    little = true;
  } else if (b0 == 0xFE && b1 == 0xFF) {
    little = false;
  } else {
    return false;
  }
  auto unit = [&](std::size_t i) -> char32_t {
    const auto lo = static_cast<unsigned char>(bytes[little ? i : i + 1]);
    const auto hi = static_cast<unsigned char>(bytes[little ? i + 1 : i]);
    return static_cast<char32_t>(hi << 8 | lo);
  };
  out.clear();
  out.reserve(bytes.size());
  for (std::size_t i = 2; i + 1 < bytes.size(); i += 2) {
    char32_t u = unit(i);
    if (u >= 0xD800 && u <= 0xDBFF && i + 3 < bytes.size()) {
      const char32_t v = unit(i + 2);
      if (v >= 0xDC00 && v <= 0xDFFF) {
        util::AppendUtf8(out, 0x10000 + ((u - 0xD800) << 10) + (v - 0xDC00));
        i += 2;
        continue;
      }
    }
    util::AppendUtf8(out, u);  // a lone surrogate comes out as U+FFFD
  }
  return true;
}

// The bytes of a text format as UTF-8 without a BOM, or the reason they are not text.
util::Result<std::string> DecodeTextBytes(std::string_view bytes) {
  std::string converted;
  if (Utf16WithBomToUtf8(bytes, converted)) return converted;
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  if (!util::IsValidUtf8(bytes))
    return Fail(ErrorCode::kInvalidArgument, "the file is not UTF-8 text");
  return std::string(bytes);
}

}  // namespace

std::optional<DocumentType> DocumentTypeFor(std::string_view file_name,
                                            std::string_view mime_type) {
  const auto dot = file_name.rfind('.');
  if (dot != std::string_view::npos) {
    const std::string ext = Lower(file_name.substr(dot + 1));
    if (ext == "txt" || ext == "text") return DocumentType::kText;
    if (ext == "md" || ext == "markdown") return DocumentType::kMarkdown;
    if (ext == "html" || ext == "htm") return DocumentType::kHtml;
    if (ext == "pdf") return DocumentType::kPdf;
    if (ext == "docx") return DocumentType::kDocx;
  }
  // "text/html; charset=utf-8": only the media type counts.
  const std::string mime = Lower(mime_type.substr(0, mime_type.find(';')));
  const auto trimmed = mime.substr(0, mime.find_last_not_of(" \t") + 1);
  for (DocumentType type : kAllTypes) {
    if (trimmed == MimeTypeOf(type)) return type;
  }
  if (trimmed == "text/x-markdown") return DocumentType::kMarkdown;
  return std::nullopt;
}

const char* MimeTypeOf(DocumentType type) {
  switch (type) {
    case DocumentType::kText:
      return "text/plain";
    case DocumentType::kMarkdown:
      return "text/markdown";
    case DocumentType::kHtml:
      return "text/html";
    case DocumentType::kPdf:
      return "application/pdf";
    case DocumentType::kDocx:
      return "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
  }
  return "application/octet-stream";
}

std::vector<std::string> SupportedMimeTypes() {
  std::vector<std::string> out;
  for (DocumentType type : kAllTypes) out.emplace_back(MimeTypeOf(type));
  return out;
}

util::Result<std::string> ExtractText(DocumentType type, std::string_view bytes,
                                      const DocumentLimits& limits) {
  if (bytes.size() > limits.max_input_bytes) {
    return Fail(ErrorCode::kPayloadTooLarge,
                "the file is larger than " + detail::SizeText(limits.max_input_bytes));
  }
  const detail::Deadline deadline(limits.deadline);
  util::Result<std::string> raw;
  switch (type) {
    case DocumentType::kText:
      raw = DecodeTextBytes(bytes);
      break;
    case DocumentType::kMarkdown:
      raw = DecodeTextBytes(bytes);
      if (raw) raw = detail::MarkdownText(*raw);
      break;
    case DocumentType::kHtml:
      raw = DecodeTextBytes(bytes);
      if (raw) raw = detail::HtmlText(*raw);
      break;
    case DocumentType::kPdf:
      raw = detail::PdfText(bytes, limits, deadline);
      break;
    case DocumentType::kDocx:
      raw = detail::DocxText(bytes, limits, deadline);
      break;
  }
  if (!raw) return raw;
  if (deadline.Passed()) return tl::unexpected(deadline.Error());
  std::string text = detail::NormalizeText(*raw);
  if (text.size() > limits.max_text_bytes) {
    return Fail(ErrorCode::kPayloadTooLarge,
                "the document's text is larger than " + detail::SizeText(limits.max_text_bytes));
  }
  if (text.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                type == DocumentType::kPdf
                    ? "the document has no text (a scanned PDF needs text recognition first)"
                    : "the document has no text");
  }
  return text;
}

namespace detail {

util::Error Deadline::Error() const {
  const auto ms = budget_.count();
  std::string amount =
      ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
  return util::Error{ErrorCode::kPayloadTooLarge, "reading the document took more than " + amount};
}

std::string SizeText(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::string NormalizeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::string line;
  bool blank_pending = false;
  auto end_line = [&] {
    const auto last = line.find_last_not_of(" \t");
    if (last == std::string::npos) {
      blank_pending = !out.empty();  // leading blank lines are dropped
    } else {
      line.resize(last + 1);
      if (out.empty()) {
        line.erase(0, line.find_first_not_of(" \t"));
      } else {
        out += blank_pending ? "\n\n" : "\n";
      }
      out += line;
      blank_pending = false;
    }
    line.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (c == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') continue;
      end_line();
    } else if (c == '\n' || c == '\f' || c == '\v') {
      // A form feed (a PDF page break) separates paragraphs.
      if (c != '\n') {
        end_line();
        blank_pending = !out.empty();
        continue;
      }
      end_line();
    } else if (c == '\t') {
      line += c;
    } else if (u < 0x20 || u == 0x7F) {
      line += ' ';
    } else if (u == 0xC2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0xA0) {
      line += ' ';  // no-break space: a space for search purposes
      ++i;
    } else {
      line += c;
    }
  }
  end_line();
  return out;
}

}  // namespace detail
}  // namespace sb::knowledge
