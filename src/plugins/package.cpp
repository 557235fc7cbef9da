#include "plugins/package.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <system_error>

#include "util/crypto.hpp"
#include "util/private_files.hpp"

namespace sb::plugins {
namespace {

namespace fs = std::filesystem;
using util::ErrorCode;

tl::unexpected<util::Error> Bad(std::string why) {
  return util::Fail(ErrorCode::kInvalidArgument, "bad package: " + why);
}

tl::unexpected<util::Error> TooLarge(std::string why) {
  return util::Fail(ErrorCode::kPayloadTooLarge, "bad package: " + why);
}

// Entry names as written in messages: printable, bounded.
std::string Shown(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 120)) {
    out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  }
  if (name.size() > 120) out += "...";
  return out;
}

// The entry's path relative to the package root, or an error when it could leave the folder.
util::Result<std::string> SafeRelativePath(std::string_view name) {
  if (name.empty()) return Bad("an entry has no name");
  if (name.front() == '/') return Bad("entry " + Shown(name) + " has an absolute path");
  if (name.find('\\') != std::string_view::npos) {
    return Bad("entry " + Shown(name) + " has a '\\' in its path");
  }
  std::string out;
  std::size_t start = 0;
  while (start < name.size()) {
    auto slash = name.find('/', start);
    if (slash == std::string_view::npos) slash = name.size();
    std::string_view part = name.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return Bad("entry " + Shown(name) + " leaves the plugin's folder ('..')");
    if (!out.empty()) out += '/';
    out += part;
  }
  if (out.empty()) return Bad("entry " + Shown(name) + " names the package root");
  if (out.size() > 1024) return Bad("entry " + Shown(name) + " has a path over 1024 bytes");
  return out;
}

struct ArchiveCloser {
  void operator()(archive* a) const { archive_read_free(a); }
};

class Staging {
 public:
  explicit Staging(fs::path path) : path_(std::move(path)) {}
  ~Staging() {
    if (!kept_) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  void Keep() { kept_ = true; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool kept_ = false;
};

// Writes the entry's data to a new file (never through an existing one), counting real bytes.
util::Result<void> WriteFile(archive* a, const fs::path& target, bool executable,
                             const PackageLimits& limits, std::uint64_t& total,
                             const std::string& shown) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        executable ? 0755 : 0644);
  if (fd < 0) {
    if (errno == EEXIST) return Bad("entry " + shown + " appears twice");
    return util::Fail(ErrorCode::kInternal,
                      fmt::format("cannot write {}: {}", shown, std::strerror(errno)));
  }
  std::uint64_t written = 0;
  char buffer[64 * 1024];
  util::Result<void> result = util::Ok();
  for (;;) {
    const la_ssize_t n = archive_read_data(a, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      result = Bad(fmt::format("entry {} cannot be read: {}", shown,
                               archive_error_string(a) ? archive_error_string(a) : "corrupt"));
      break;
    }
    written += static_cast<std::uint64_t>(n);
    total += static_cast<std::uint64_t>(n);
    if (written > limits.max_file_bytes) {
      result =
          TooLarge(fmt::format("entry {} is larger than {} bytes", shown, limits.max_file_bytes));
      break;
    }
    if (total > limits.max_unpacked_bytes) {
      result = TooLarge(
          fmt::format("its files hold more than {} bytes unpacked", limits.max_unpacked_bytes));
      break;
    }
    const char* p = buffer;
    std::size_t left = static_cast<std::size_t>(n);
    while (left > 0) {
      const ssize_t w = ::write(fd, p, left);
      if (w < 0) {
        if (errno == EINTR) continue;
        result = util::Fail(ErrorCode::kInternal,
                            fmt::format("cannot write {}: {}", shown, std::strerror(errno)));
        break;
      }
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    if (!result) break;
  }
  ::close(fd);
  return result;
}

util::Result<std::string> ReadSmallFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Bad("it has no manifest.yaml at its root");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

util::Result<PluginManifest> UnpackPackage(std::string_view zip, const fs::path& dest,
                                           const PackageLimits& limits,
                                           std::string_view expected_id) {
  if (zip.size() > limits.max_package_bytes) {
    return TooLarge(
        fmt::format("{} bytes, over the limit of {}", zip.size(), limits.max_package_bytes));
  }
  std::error_code ec;
  if (fs::exists(dest, ec)) {
    return util::Fail(ErrorCode::kConflict, fmt::format("{} exists already", dest.string()));
  }
  // Plugin folders are the server's alone (0700), like the rest of the data directory.
  if (auto r = util::CreatePrivateDirectories(dest.parent_path()); !r) {
    return tl::unexpected(r.error());
  }
  Staging staging(fs::path(dest).concat(".partial"));
  fs::remove_all(staging.path(), ec);
  if (::mkdir(staging.path().c_str(), 0700) != 0) {
    return util::Fail(
        ErrorCode::kInternal,
        fmt::format("cannot create {}: {}", staging.path().string(), std::strerror(errno)));
  }

  std::unique_ptr<archive, ArchiveCloser> a(archive_read_new());
  archive_read_support_format_zip(a.get());
  if (archive_read_open_memory(a.get(), zip.data(), zip.size()) != ARCHIVE_OK) {
    return Bad("it is not a zip file");
  }
  std::uint64_t total = 0;
  std::size_t entries = 0;
  std::set<std::string> seen;
  for (;;) {
    archive_entry* entry = nullptr;
    const int rc = archive_read_next_header(a.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      return Bad(entries == 0 ? "it is not a zip file"
                              : fmt::format("it is corrupt after {} entries", entries));
    }
    if (++entries > limits.max_entries) {
      return TooLarge(fmt::format("more than {} entries", limits.max_entries));
    }
    const char* raw_name = archive_entry_pathname(entry);
    auto relative = SafeRelativePath(raw_name ? raw_name : "");
    if (!relative) return tl::unexpected(relative.error());
    const std::string shown = Shown(*relative);
    if (archive_entry_hardlink(entry) != nullptr) {
      return Bad("entry " + shown + " is a link; links are not allowed");
    }
    const auto type = archive_entry_filetype(entry);
    if (type == AE_IFLNK) {
      return Bad("entry " + shown + " is a symbolic link; links are not allowed");
    }
    if (type != AE_IFREG && type != AE_IFDIR) {
      return Bad("entry " + shown + " is not a file or a folder");
    }
    if (!seen.insert(*relative).second && type == AE_IFREG) {
      return Bad("entry " + shown + " appears twice");
    }
    const fs::path target = staging.path() / *relative;
    fs::create_directories(type == AE_IFDIR ? target : target.parent_path(), ec);
    if (ec) {
      // A file of the package stands where a folder is needed (a/b after a file a).
      return Bad("entry " + shown + " conflicts with another entry");
    }
    if (type == AE_IFDIR) continue;
    const bool executable = (archive_entry_perm(entry) & 0111) != 0;
    if (auto w = WriteFile(a.get(), target, executable, limits, total, shown); !w) {
      return tl::unexpected(w.error());
    }
  }
  if (entries == 0) return Bad("it is empty");

  auto text = ReadSmallFile(staging.path() / "manifest.yaml");
  if (!text) return tl::unexpected(text.error());
  auto manifest = ParseManifest(*text);
  if (!manifest) return Bad(manifest.error().message);
  if (!expected_id.empty() && manifest->id() != expected_id) {
    return Bad(fmt::format("its manifest names {} instead of {}", manifest->id(), expected_id));
  }
  // The program, or the script an interpreter runs, is a file of the package (links were
  // refused above), so the command can only run the package's own code.
  const std::string& program = manifest->command.front();
  const std::string& own =
      program.find('/') != std::string::npos ? program : manifest->command.at(1);
  if (!fs::is_regular_file(staging.path() / own, ec)) {
    return Bad(
        fmt::format("execution.command names {}, which the package does not hold", Shown(own)));
  }
  fs::rename(staging.path(), dest, ec);
  if (ec) {
    return util::Fail(ErrorCode::kInternal, fmt::format("cannot move the plugin into {}: {}",
                                                        dest.string(), ec.message()));
  }
  staging.Keep();
  return manifest;
}

util::Result<void> VerifyChecksum(std::string_view zip, std::string_view expected_sha256_hex) {
  if (expected_sha256_hex.empty()) return util::Ok();
  std::string expected(expected_sha256_hex);
  std::transform(expected.begin(), expected.end(), expected.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (util::Sha256Hex(zip) != expected) {
    return Bad("checksum mismatch (the download differs from what the marketplace published)");
  }
  return util::Ok();
}

util::Result<std::string> ReadPackageFile(const fs::path& dir, const std::string& relative,
                                          std::uintmax_t max_bytes) {
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) return util::Fail(ErrorCode::kNotFound, "no such file");
  const fs::path path = dir / relative;
  const fs::path resolved = fs::weakly_canonical(path, ec);
  const std::string prefix = root.string() + "/";
  if (ec || resolved.string().rfind(prefix, 0) != 0) {
    return util::Fail(ErrorCode::kNotFound, "no such file");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return util::Fail(ErrorCode::kNotFound, "no such file");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return util::Fail(ErrorCode::kNotFound, "no such file");
  }
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return util::Fail(ErrorCode::kPayloadTooLarge, "the file is too large");
  }
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
  return bytes;
}

util::Result<std::string> ReadPackageAsset(const fs::path& dir, std::string_view name,
                                           std::uintmax_t max_bytes) {
  const auto not_found = [] { return util::Fail(ErrorCode::kNotFound, "no such asset"); };
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return not_found();
  for (const char c : name) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      return not_found();
    }
  }
  // A link named assets (only an unsandboxed plugin could make one) would move the root that
  // ReadPackageFile checks against.
  std::error_code ec;
  const fs::path assets = dir / "assets";
  if (!fs::is_directory(fs::symlink_status(assets, ec))) return not_found();
  auto bytes = ReadPackageFile(assets, std::string(name), max_bytes);
  if (!bytes && bytes.error().code == ErrorCode::kNotFound) return not_found();
  return bytes;
}

}  // namespace sb::plugins
