#include "util/private_files.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace sb::util {
namespace {

Error IoError(const char* what, const std::filesystem::path& path) {
  return {ErrorCode::kInternal,
          std::string(what) + " " + path.string() + ": " + std::strerror(errno)};
}

}  // namespace

Result<void> CreatePrivateDirectories(const std::filesystem::path& dir) {
  // Walk up to the first folder that exists, then create the missing ones top-down.
  std::vector<std::filesystem::path> missing;
  for (auto p = dir.lexically_normal(); !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return tl::unexpected(IoError("cannot create folder", p));
      }
      break;
    }
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
      return tl::unexpected(IoError("cannot create folder", *it));
    }
  }
  return Ok();
}

Result<void> CreatePrivateFile(const std::filesystem::path& path) {
  const int fd =
      ::open(path.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) return tl::unexpected(IoError("cannot create", path));
  struct stat st {};
  Result<void> result = Ok();
  if (::fstat(fd, &st) != 0) {
    result = tl::unexpected(IoError("cannot stat", path));
  } else if (S_ISREG(st.st_mode) && (st.st_mode & 077) != 0 && ::fchmod(fd, 0600) != 0) {
    // A file of another owner that we may still write (a shared group): narrowing it is not
    // ours to do, and refusing to start over it would help no one.
    spdlog::warn("cannot narrow {} to mode 0600: {}", path.string(), std::strerror(errno));
  }
  ::close(fd);
  return result;
}

}  // namespace sb::util
