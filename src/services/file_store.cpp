#include "services/file_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "util/ids.hpp"
#include "util/private_files.hpp"
#include "util/utf8.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;

constexpr std::size_t kMaxNameBytes = 120;

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7F; }

// Cuts `s` to at most `max` bytes without splitting a UTF-8 sequence.
std::string CutUtf8(std::string s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  s.resize(end);
  return s;
}

util::Error NotFound() { return {ErrorCode::kNotFound, "file not found"}; }

}  // namespace

std::string SanitizeFileName(std::string_view name) {
  // The last component of either kind of path.
  if (auto slash = name.find_last_of("/\\"); slash != std::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  std::string clean;
  for (char c : util::ToValidUtf8(name)) {
    if (IsControl(static_cast<unsigned char>(c))) continue;
    clean += c;
  }
  // Leading dots (hidden files, "..") and surrounding spaces go.
  std::size_t start = clean.find_first_not_of(". ");
  clean = start == std::string::npos ? std::string() : clean.substr(start);
  while (!clean.empty() && clean.back() == ' ') clean.pop_back();
  if (clean.size() > kMaxNameBytes) {
    // Keep the extension when cutting a long name.
    const std::string ext = ExtensionOf(clean);
    const std::size_t keep = ext.empty() || ext.size() > 16 ? 0 : ext.size() + 1;
    clean = CutUtf8(clean.substr(0, clean.size() - keep), kMaxNameBytes - keep);
    if (keep) clean.append(".").append(ext);
  }
  return clean.empty() ? "file" : clean;
}

std::string ExtensionOf(std::string_view name) {
  const auto dot = name.find_last_of('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return {};
  std::string ext(name.substr(dot + 1));
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

bool FileStore::IsWellFormedKey(std::string_view key) {
  if (key.empty() || key.size() > 200 || key == "." || key == "..") return false;
  if (key.find("..") != std::string_view::npos) return false;
  for (char c : key) {
    if (c == '/' || c == '\\' || IsControl(static_cast<unsigned char>(c))) return false;
  }
  return util::IsValidUtf8(key);
}

util::Result<std::string> FileStore::Save(std::string_view original_name, std::string_view bytes) {
  const std::string name = SanitizeFileName(original_name);
  const std::string ext = ExtensionOf(name);
  std::string stem = ext.empty() ? name : name.substr(0, name.size() - ext.size() - 1);
  // ".." inside a name ("a..b.txt") would make a key the checker refuses.
  std::string safe_stem;
  for (char c : stem) {
    if (c == '.' && !safe_stem.empty() && safe_stem.back() == '.') {
      safe_stem.back() = '_';
    } else {
      safe_stem += c;
    }
  }
  stem = std::move(safe_stem);
  // 16 hex digits of a random UUID (60 random bits): images are served without a credential, so
  // a key must not be guessable from the name it was uploaded under.
  std::string random = util::NewUuid();
  std::erase(random, '-');
  std::string key = stem + "_" + random.substr(0, 16);
  if (!ext.empty()) key.append(".").append(ext);
  if (auto made = util::CreatePrivateDirectories(dir_); !made) return tl::unexpected(made.error());
  const auto final_path = dir_ / key;
  const auto temp_path = dir_ / std::string(".").append(key).append(".part");
  const int fd =
      ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return util::Fail(ErrorCode::kInternal,
                      std::string("cannot store the upload: ") + std::strerror(errno));
  }
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(temp_path.c_str());
      return util::Fail(ErrorCode::kInternal,
                        std::string("cannot store the upload: ") + std::strerror(err));
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(temp_path.c_str());
    return util::Fail(ErrorCode::kInternal, "cannot store the upload: the disk refused it");
  }
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    ::unlink(temp_path.c_str());
    return util::Fail(ErrorCode::kInternal, "cannot store the upload: rename failed");
  }
  return key;
}

util::Result<std::string> FileStore::Load(std::string_view key, std::size_t max_bytes) const {
  if (!IsWellFormedKey(key)) return tl::unexpected(NotFound());
  const auto path = dir_ / std::string(key);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return tl::unexpected(NotFound());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return tl::unexpected(NotFound());
  }
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return util::Fail(ErrorCode::kPayloadTooLarge, "the file is larger than allowed");
  }
  std::string out(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

util::Result<std::int64_t> FileStore::Size(std::string_view key) const {
  if (!IsWellFormedKey(key)) return tl::unexpected(NotFound());
  std::error_code ec;
  const auto path = dir_ / std::string(key);
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path, ec))) {
    return tl::unexpected(NotFound());
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return tl::unexpected(NotFound());
  return static_cast<std::int64_t>(size);
}

bool FileStore::Exists(std::string_view key) const { return Size(key).has_value(); }

void FileStore::Remove(std::string_view key) const {
  if (!IsWellFormedKey(key)) return;
  std::error_code ec;
  std::filesystem::remove(dir_ / std::string(key), ec);
}

}  // namespace sb::services
