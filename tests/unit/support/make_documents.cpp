#include "support/make_documents.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <cstdio>
#include <stdexcept>

#include "util/markup.hpp"

namespace sb::test {
namespace {

std::string PdfString(const std::string& text) {
  std::string out = "(";
  for (char c : text) {
    if (c == '(' || c == ')' || c == '\\') out += '\\';
    out += c;
  }
  return out + ")";
}

la_ssize_t AppendToString(archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

class ZipWriter {
 public:
  ZipWriter() : a_(archive_write_new()) {
    archive_write_set_format_zip(a_);
    archive_write_set_options(a_, "zip:compression=deflate");
    archive_write_set_bytes_in_last_block(a_, 1);
    if (archive_write_open(a_, &out_, nullptr, &AppendToString, nullptr) != ARCHIVE_OK) {
      throw std::runtime_error(archive_error_string(a_));
    }
  }
  ~ZipWriter() { archive_write_free(a_); }

  void Begin(const std::string& name, std::size_t size) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, name.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(size));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_write_header(a_, entry);
    archive_entry_free(entry);
  }
  void Write(const std::string& data) { archive_write_data(a_, data.data(), data.size()); }
  std::string Finish() {
    archive_write_close(a_);
    return std::move(out_);
  }

 private:
  archive* a_;
  std::string out_;
};

}  // namespace

std::string MakePdfFromObjects(const std::vector<std::string>& bodies,
                               const std::string& trailer_entries) {
  std::string out = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
  std::vector<std::size_t> offsets;
  for (std::size_t k = 0; k < bodies.size(); ++k) {
    offsets.push_back(out.size());
    out += std::to_string(k + 1) + " 0 obj\n" + bodies[k] + "\nendobj\n";
  }
  const std::size_t xref = out.size();
  out += "xref\n0 " + std::to_string(bodies.size() + 1) + "\n0000000000 65535 f \n";
  for (std::size_t offset : offsets) {
    char line[32];
    std::snprintf(line, sizeof(line), "%010zu 00000 n \n", offset);
    out += line;
  }
  out += "trailer\n<< /Size " + std::to_string(bodies.size() + 1) + " " + trailer_entries +
         " >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return out;
}

std::string MakePdf(const std::vector<std::string>& pages) {
  // 1 catalog, 2 page tree, 3 font, then a page and its content stream per page.
  std::vector<std::string> bodies(3);
  std::string kids;
  for (std::size_t p = 0; p < pages.size(); ++p) {
    const std::size_t page_obj = 4 + 2 * p;
    kids += std::to_string(page_obj) + " 0 R ";
    std::string content = "BT /F1 12 Tf 72 720 Td 14 TL\n";
    std::size_t begin = 0;
    for (;;) {
      const std::size_t end = pages[p].find('\n', begin);
      content += PdfString(pages[p].substr(begin, end - begin)) + " Tj T*\n";
      if (end == std::string::npos) break;
      begin = end + 1;
    }
    content += "ET";
    bodies.push_back(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
        "<< /F1 3 0 R >> >> /Contents " +
        std::to_string(page_obj + 1) + " 0 R >>");
    bodies.push_back("<< /Length " + std::to_string(content.size()) + " >>\nstream\n" + content +
                     "\nendstream");
  }
  bodies[0] = "<< /Type /Catalog /Pages 2 0 R >>";
  bodies[1] = "<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages.size()) + " >>";
  bodies[2] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
  return MakePdfFromObjects(bodies, "/Root 1 0 R");
}

std::string MakeZip(const std::vector<std::pair<std::string, std::string>>& entries) {
  ZipWriter zip;
  for (const auto& [name, data] : entries) {
    zip.Begin(name, data.size());
    zip.Write(data);
  }
  return zip.Finish();
}

std::string MakeZipWithRepeatedEntry(const std::string& name, const std::string& head,
                                     const std::string& filler, std::size_t repeat,
                                     const std::string& tail) {
  ZipWriter zip;
  zip.Begin(name, head.size() + filler.size() * repeat + tail.size());
  zip.Write(head);
  std::string block;
  const std::size_t per_block =
      std::max<std::size_t>(1, (1u << 20) / std::max<std::size_t>(1, filler.size()));
  for (std::size_t k = 0; k < per_block; ++k) block += filler;
  std::size_t left = repeat;
  while (left >= per_block) {
    zip.Write(block);
    left -= per_block;
  }
  for (; left > 0; --left) zip.Write(filler);
  zip.Write(tail);
  return zip.Finish();
}

std::vector<std::pair<std::string, std::string>> DocxParts(const std::string& document_xml) {
  return {
      {"[Content_Types].xml",
       R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>)"},
      {"_rels/.rels",
       R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>)"},
      {"word/document.xml", document_xml},
  };
}

std::string DocxDocumentXml(const std::vector<std::string>& paragraphs) {
  std::string xml =
      R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>)";
  for (const std::string& p : paragraphs) {
    xml += "<w:p><w:r><w:t xml:space=\"preserve\">" + util::EscapeMarkup(p) + "</w:t></w:r></w:p>";
  }
  return xml + "<w:sectPr/></w:body></w:document>";
}

std::string MakeDocx(const std::vector<std::string>& paragraphs) {
  return MakeZip(DocxParts(DocxDocumentXml(paragraphs)));
}

}  // namespace sb::test
