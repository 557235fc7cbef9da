// Plain text out of an uploaded document, for chunking: plain text, Markdown, HTML, PDF (poppler)
// and DOCX (libarchive + pugixml). Everything a stranger uploads is bounded: input size, the
// text produced, a DOCX's uncompressed XML (zip bombs), a PDF's pages, and the time spent.
//   auto type = DocumentTypeFor("manual.pdf");            // DocumentType::kPdf
//   auto text = ExtractText(*type, bytes);                // paragraphs separated by "\n\n"
//   if (!text) file.failed(text.error().message);         // "the PDF cannot be read: ..."
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace sb::knowledge {

enum class DocumentType { kText, kMarkdown, kHtml, kPdf, kDocx };

struct DocumentLimits {
  std::size_t max_input_bytes = 64u << 20;
  std::size_t max_text_bytes = 32u << 20;      // the extracted text
  std::size_t max_docx_xml_bytes = 64u << 20;  // word/document.xml once inflated
  int max_pdf_pages = 5000;
  std::chrono::milliseconds deadline{120'000};  // checked between pages and parts
};

// From the file name's extension (case-insensitive: txt, text, md, markdown, html, htm, pdf,
// docx), else from the MIME type when one is given; nullopt when neither is supported.
std::optional<DocumentType> DocumentTypeFor(std::string_view file_name,
                                            std::string_view mime_type = {});
// "text/plain", "text/markdown", "text/html", "application/pdf",
// "application/vnd.openxmlformats-officedocument.wordprocessingml.document".
const char* MimeTypeOf(DocumentType type);
// Every supported MIME type, for `/knowledge/parsers`.
std::vector<std::string> SupportedMimeTypes();

// The document's text, UTF-8, paragraphs separated by a blank line. kInvalidArgument with a
// reason a person can act on when it cannot be read ("the PDF cannot be read (damaged or
// encrypted)", "the file is not UTF-8 text", "the document has no text"), and kPayloadTooLarge
// naming the limit when one is passed ("the DOCX inflates past 64 MiB", "the PDF has more than
// 5000 pages", "reading the document took more than 120 s").
util::Result<std::string> ExtractText(DocumentType type, std::string_view bytes,
                                      const DocumentLimits& limits = {});

}  // namespace sb::knowledge
