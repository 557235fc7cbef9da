// DOCX text: the zip is read from memory with libarchive, word/document.xml inflated with a cap
// (a zip bomb stops at max_docx_xml_bytes, after inflating no more than that), and its text runs
// taken with pugixml: paragraphs, tabs, line breaks, and tables row by row (cells separated by a
// tab). Deleted text (w:delText), field codes (w:instrText) and the duplicate of a text box for
// old readers (mc:Fallback) are not text.
#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <pugixml.hpp>
#include <string>
#include <string_view>

#include "knowledge/document_text_internal.hpp"

namespace sb::knowledge::detail {
namespace {

using util::ErrorCode;
using util::Fail;

constexpr int kMaxZipEntries = 10'000;  // a real DOCX has a few dozen parts
constexpr std::string_view kDocumentPart = "word/document.xml";

struct ArchiveCloser {
  void operator()(archive* a) const { archive_read_free(a); }
};

std::string_view LocalName(const char* name) {
  std::string_view s(name);
  const auto colon = s.find(':');
  return colon == std::string_view::npos ? s : s.substr(colon + 1);
}

// The inflated word/document.xml, or why it cannot be had.
util::Result<std::string> ReadDocumentPart(std::string_view bytes, const DocumentLimits& limits,
                                           const Deadline& deadline) {
  // Word saves a password-protected document (and the old .doc format) as an OLE compound file.
  if (bytes.substr(0, 8) == std::string_view("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8)) {
    return Fail(ErrorCode::kInvalidArgument,
                "the DOCX is password-protected or an old .doc file; save it as an unprotected "
                ".docx");
  }
  std::unique_ptr<archive, ArchiveCloser> zip(archive_read_new());
  if (!zip) return Fail(ErrorCode::kInternal, "cannot allocate a zip reader");
  archive_read_support_format_zip(zip.get());
  if (archive_read_open_memory(zip.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    return Fail(ErrorCode::kInvalidArgument, "the DOCX cannot be read (not a zip file)");
  }
  archive_entry* entry = nullptr;
  int entries_seen = 0;
  for (; entries_seen < kMaxZipEntries; ++entries_seen) {
    const int r = archive_read_next_header(zip.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      return Fail(ErrorCode::kInvalidArgument, "the DOCX cannot be read (damaged zip file)");
    }
    if (deadline.Passed()) return tl::unexpected(deadline.Error());
    const char* path = archive_entry_pathname(entry);
    if (path == nullptr || std::string_view(path) != kDocumentPart) continue;
    std::string xml;
    char buffer[64 * 1024];
    for (;;) {
      const la_ssize_t n = archive_read_data(zip.get(), buffer, sizeof(buffer));
      if (n == 0) break;
      if (n < 0)
        return Fail(ErrorCode::kInvalidArgument, "the DOCX cannot be read (damaged zip file)");
      if (xml.size() + static_cast<std::size_t>(n) > limits.max_docx_xml_bytes) {
        return Fail(ErrorCode::kPayloadTooLarge,
                    "the DOCX inflates past " + SizeText(limits.max_docx_xml_bytes));
      }
      xml.append(buffer, static_cast<std::size_t>(n));
      if (deadline.Passed()) return tl::unexpected(deadline.Error());
    }
    return xml;
  }
  if (entries_seen >= kMaxZipEntries) {
    return Fail(ErrorCode::kInvalidArgument, "the DOCX has more than " +
                                                 std::to_string(kMaxZipEntries) +
                                                 " parts before word/document.xml");
  }
  return Fail(ErrorCode::kInvalidArgument, "not a DOCX document (no word/document.xml)");
}

// Walks the body without recursion (a deeply nested document cannot overflow the stack).
class BodyText {
 public:
  std::string Run(pugi::xml_node body) {
    pugi::xml_node node = body.first_child();
    while (node && node != body) {
      Enter(node);
      if (node.first_child() && !Skipped(node)) {
        node = node.first_child();
        continue;
      }
      for (;;) {
        Leave(node);
        if (node.next_sibling()) {
          node = node.next_sibling();
          break;
        }
        node = node.parent();
        if (!node || node == body) return std::move(out_);
      }
    }
    return std::move(out_);
  }

 private:
  static bool Skipped(pugi::xml_node node) {
    const std::string_view name = LocalName(node.name());
    // mc:Fallback repeats an mc:Choice (text boxes) for older readers: read it once.
    return name == "delText" || name == "instrText" || name == "Fallback";
  }

  void Enter(pugi::xml_node node) {
    if (node.type() != pugi::node_element) return;
    const std::string_view name = LocalName(node.name());
    if (name == "t") {
      out_ += node.text().get();
    } else if (name == "tab") {
      out_ += '\t';
    } else if (name == "noBreakHyphen") {
      out_ += '-';
    } else if (name == "br" || name == "cr") {
      out_ += '\n';
    } else if (name == "tc") {
      ++cell_depth_;
    }
  }

  void Leave(pugi::xml_node node) {
    if (node.type() != pugi::node_element) return;
    const std::string_view name = LocalName(node.name());
    if (name == "p") {
      out_ += cell_depth_ > 0 ? " " : "\n\n";
    } else if (name == "tc") {
      --cell_depth_;
      out_ += '\t';
    } else if (name == "tr") {
      out_ += '\n';
    } else if (name == "tbl") {
      out_ += "\n\n";
    }
  }

  std::string out_;
  int cell_depth_ = 0;
};

}  // namespace

util::Result<std::string> DocxText(std::string_view bytes, const DocumentLimits& limits,
                                   const Deadline& deadline) {
  auto xml = ReadDocumentPart(bytes, limits, deadline);
  if (!xml) return tl::unexpected(xml.error());
  pugi::xml_document doc;
  // No entity expansion beyond XML's five (pugixml never loads DTDs), so no billion laughs.
  const auto parsed = doc.load_buffer_inplace(xml->data(), xml->size(), pugi::parse_default);
  if (!parsed) {
    return Fail(ErrorCode::kInvalidArgument,
                std::string("the DOCX cannot be read (bad XML: ") + parsed.description() + ")");
  }
  pugi::xml_node body;
  for (pugi::xml_node child : doc.document_element().children()) {
    if (LocalName(child.name()) == "body") body = child;
  }
  if (!body) return Fail(ErrorCode::kInvalidArgument, "not a DOCX document (no w:body)");
  if (deadline.Passed()) return tl::unexpected(deadline.Error());
  return BodyText().Run(body);
}

}  // namespace sb::knowledge::detail
