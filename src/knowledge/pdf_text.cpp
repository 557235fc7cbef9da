// PDF text through poppler-cpp in reading order (columns one after the other, as pdftotext
// does), page by page, with the page count and the deadline checked between pages. Poppler
// reports damaged files on stderr; that goes to a sink that drops it (the caller gets one clear
// error instead).
#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <climits>
#include <memory>
#include <mutex>

#include "knowledge/document_text_internal.hpp"

namespace sb::knowledge::detail {
namespace {

using util::ErrorCode;
using util::Fail;

void DropPopplerMessage(const std::string&, void*) {}

}  // namespace

util::Result<std::string> PdfText(std::string_view bytes, const DocumentLimits& limits,
                                  const Deadline& deadline) {
  static std::once_flag quiet;
  std::call_once(quiet, [] { poppler::set_debug_error_function(&DropPopplerMessage, nullptr); });
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    return Fail(ErrorCode::kPayloadTooLarge, "the PDF is too large");
  }
  if (bytes.substr(0, 1024).find("%PDF-") == std::string_view::npos) {
    return Fail(ErrorCode::kInvalidArgument, "the file is not a PDF (no %PDF header)");
  }
  std::unique_ptr<poppler::document> doc(
      poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
  if (!doc) return Fail(ErrorCode::kInvalidArgument, "the PDF cannot be read (damaged)");
  if (doc->is_locked()) {
    return Fail(ErrorCode::kInvalidArgument,
                "the PDF cannot be read (encrypted with a password); upload an unprotected copy");
  }
  const int pages = doc->pages();
  if (pages > limits.max_pdf_pages) {
    return Fail(ErrorCode::kPayloadTooLarge,
                "the PDF has more than " + std::to_string(limits.max_pdf_pages) + " pages");
  }
  std::string out;
  for (int i = 0; i < pages; ++i) {
    if (deadline.Passed()) return tl::unexpected(deadline.Error());
    std::unique_ptr<poppler::page> page(doc->create_page(i));
    if (!page) continue;  // a damaged page: the others may still be readable
    const poppler::byte_array utf8 =
        page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout).to_utf8();
    if (!out.empty()) out += "\n\n";
    out.append(utf8.data(), utf8.size());
    if (out.size() > limits.max_text_bytes) {
      return Fail(ErrorCode::kPayloadTooLarge,
                  "the document's text is larger than " + SizeText(limits.max_text_bytes));
    }
  }
  return out;
}

}  // namespace sb::knowledge::detail
