// The web console's files as compiled into the binary: a table generated at build time from
// web/dist by cmake/embed_console.py (library sb_console_assets). Empty when the binary was built
// without the console. Read it through EmbeddedConsoleFiles (http/console.hpp).
//   for (const EmbeddedConsoleFile& f : EmbeddedConsoleTable()) ...
#pragma once

#include <cstddef>
#include <span>

namespace sb::http {

// One file of the console. The bytes live in the binary's read-only data for its lifetime.
struct EmbeddedConsoleFile {
  const char* path;  // "/index.html", "/assets/index-3f2a.js"
  const char* etag;  // 16 hex digits of the SHA-256 of the identity bytes
  const unsigned char* identity;
  std::size_t identity_size;
  const unsigned char* gzip;  // nullptr when a gzip copy would not be smaller
  std::size_t gzip_size;
  const unsigned char* br;  // nullptr when a brotli copy would not be smaller than the others
  std::size_t br_size;
};

// Defined by the generated sources; sorted by path.
std::span<const EmbeddedConsoleFile> EmbeddedConsoleTable();

}  // namespace sb::http
