// Real document bytes for the knowledge tests: hand-written PDF 1.4 files (Helvetica text, exact
// xref offsets) and DOCX zips written with libarchive, so the readers are tested on what an
// upload really contains.
//   std::string pdf = test::MakePdf({"page one text", "page two text"});
//   std::string docx = test::MakeDocx({"First paragraph.", "Second paragraph."});
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace sb::test {

// A PDF whose objects are `bodies` (object k + 1 is bodies[k], without "obj"/"endobj") and whose
// trailer dictionary holds `trailer_entries` besides /Size ("/Root 1 0 R" is the caller's).
std::string MakePdfFromObjects(const std::vector<std::string>& bodies,
                               const std::string& trailer_entries);

// One page per element; '\n' inside a page's text starts a new line. ASCII text only.
std::string MakePdf(const std::vector<std::string>& pages);

// A zip (deflated) with these entries in order.
std::string MakeZip(const std::vector<std::pair<std::string, std::string>>& entries);

// A zip with one entry `name` made of `head`, `filler` repeated `repeat` times, then `tail`,
// written in pieces so a huge entry never has to sit in memory.
std::string MakeZipWithRepeatedEntry(const std::string& name, const std::string& head,
                                     const std::string& filler, std::size_t repeat,
                                     const std::string& tail);

// The parts of a minimal DOCX around a given word/document.xml.
std::vector<std::pair<std::string, std::string>> DocxParts(const std::string& document_xml);
// word/document.xml with one w:p per paragraph (XML special characters escaped).
std::string DocxDocumentXml(const std::vector<std::string>& paragraphs);
std::string MakeDocx(const std::vector<std::string>& paragraphs);

}  // namespace sb::test
