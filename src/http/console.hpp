// The web console, served by the binary itself: the files of web/dist either compiled in
// (EmbeddedConsoleFiles) or read from a directory per request (DirectoryConsoleFiles, for
// development), answered by ConsoleHandler with content negotiation, caching and a single-page
// fallback to index.html. The router calls it only for paths no route matches.
//   EmbeddedConsoleFiles files(EmbeddedConsoleTable());
//   ConsoleHandler console(files);
//   router.SetFallback([&console](const Request& r) { return console.Handle(r); });
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "http/console_assets.hpp"
#include "http/request.hpp"

namespace sb::http {

// A content coding the console can send (RFC 9110 §8.4.1).
enum class Coding { kIdentity, kGzip, kBrotli };

// The Content-Encoding token of a coding; empty for identity.
std::string_view CodingName(Coding coding);

// One stored form of a file.
struct ConsoleVariant {
  Coding coding = Coding::kIdentity;
  std::string etag;  // strong, quoted, different for every variant of a file
  std::string_view bytes;
};

struct ConsoleFile {
  std::string content_type;
  std::vector<ConsoleVariant> variants;  // always one kIdentity
  // Owns the bytes when they were read for this request; null when they are static.
  std::shared_ptr<const std::string> storage;
};

// Where the console's files come from.
class ConsoleFiles {
 public:
  virtual ~ConsoleFiles() = default;
  // The file at `path` (percent-decoded, starting with '/'), or nullopt when there is none or the
  // path is refused (a "..", a dotfile, an escape from the root). Thread-safe.
  virtual std::optional<ConsoleFile> Find(std::string_view path) const = 0;
  // Empty when the console can be served; otherwise why not, sent with a 503.
  virtual std::string Unavailable() const = 0;
  // True when names under /assets/ carry a content hash, so the files there may be cached for a
  // year. A directory in development may change under the same name: false there.
  virtual bool AssetsAreImmutable() const = 0;
};

// The files compiled into the binary. Holds an index over `table`, which must outlive it.
class EmbeddedConsoleFiles final : public ConsoleFiles {
 public:
  explicit EmbeddedConsoleFiles(std::span<const EmbeddedConsoleFile> table);

  std::optional<ConsoleFile> Find(std::string_view path) const override;
  std::string Unavailable() const override;
  bool AssetsAreImmutable() const override { return true; }

 private:
  struct Entry {
    std::string content_type;
    std::vector<ConsoleVariant> variants;
  };
  std::unordered_map<std::string_view, Entry> files_;
};

// The files of a directory, read on every request (identity only, no long caching). Refuses
// paths with "." or ".." segments, dotfiles, and anything that resolves outside the directory.
class DirectoryConsoleFiles final : public ConsoleFiles {
 public:
  explicit DirectoryConsoleFiles(std::filesystem::path root);

  std::optional<ConsoleFile> Find(std::string_view path) const override;
  std::string Unavailable() const override;
  bool AssetsAreImmutable() const override { return false; }

 private:
  std::filesystem::path root_;  // canonical when it existed at construction
};

// The Content-Type for a file name, by its extension; application/octet-stream when unknown.
std::string_view ConsoleContentType(std::string_view path);

// Answers GET and HEAD for console paths. Thread-safe; never blocks longer than a file read.
class ConsoleHandler {
 public:
  explicit ConsoleHandler(const ConsoleFiles& files);

  // nullopt for what is not the console's (another method; /api/, /bots/, /healthz, /readyz,
  // /metrics and below), so the caller answers its own 404. Otherwise the file, the 304, the
  // single-page fallback to index.html, a text 404, or a text 503 when there is no console.
  std::optional<Response> Handle(const Request& request) const;

 private:
  const ConsoleFiles& files_;
};

}  // namespace sb::http
