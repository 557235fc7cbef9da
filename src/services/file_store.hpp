// Uploaded files (documents for knowledge bases, images for the console) kept under the data
// directory, named by a key the server makes: the upload's sanitised name, 16 random hex digits
// and its extension, in LangBot's form with more randomness ("manual_3f9a01c2d41e4b07.pdf"). A key
// from a client is checked before any path is built from it, so nothing is read or written outside
// the folder.
//   FileStore documents(data_dir / "files" / "documents");
//   auto key = documents.Save("../../etc/Manual v2.PDF", bytes);
//   // *key == "Manual v2_3f9a01c2d41e4b07.pdf"
//   auto bytes = documents.Load(*key, max_bytes);
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace sb::services {

// The file name part of an upload's name made safe to keep and show: the last path component,
// control characters, '/', '\\' and leading dots removed, at most 120 bytes of valid UTF-8.
// "file" when nothing is left.
std::string SanitizeFileName(std::string_view name);
// The extension of a sanitised name, lower case, without the dot ("" when none).
std::string ExtensionOf(std::string_view name);

// Thread-safe (each call works on its own file).
class FileStore {
 public:
  explicit FileStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // Writes `bytes` to a new file (mode 0600, written to a temporary name and renamed, so a
  // key never names a partial file) and returns its key. kInternal when the disk fails.
  util::Result<std::string> Save(std::string_view original_name, std::string_view bytes);
  // kNotFound for a malformed key (a path, "..", a control character) or a missing file.
  util::Result<std::string> Load(std::string_view key, std::size_t max_bytes) const;
  util::Result<std::int64_t> Size(std::string_view key) const;
  bool Exists(std::string_view key) const;
  // Removes the file of `key` if there is one; malformed keys are ignored.
  void Remove(std::string_view key) const;

  // True when `key` could be one this store made: one path component, no "..", no control
  // character, at most 200 bytes.
  static bool IsWellFormedKey(std::string_view key);

 private:
  std::filesystem::path dir_;
};

}  // namespace sb::services
