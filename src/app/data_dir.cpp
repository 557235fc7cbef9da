#include "app/data_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/crypto.hpp"
#include "util/private_files.hpp"

namespace sb::app {
namespace {

util::Error IoError(const std::string& what, const std::filesystem::path& path) {
  return {util::ErrorCode::kInternal, what + " " + path.string() + ": " + std::strerror(errno)};
}

}  // namespace

util::Result<void> EnsurePrivateDirectory(const std::filesystem::path& dir) {
  if (auto r = util::CreatePrivateDirectories(dir); !r) return r;
  // A data directory that existed before (made by hand, or by an older version) is narrowed.
  ::chmod(dir.c_str(), 0700);
  return util::Ok();
}

util::Result<void> WritePrivateFile(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return tl::unexpected(IoError("cannot create", tmp));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      auto err = IoError("cannot write", tmp);
      ::close(fd);
      return tl::unexpected(err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return tl::unexpected(IoError("cannot sync", tmp));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return tl::unexpected(IoError("cannot rename onto", path));
  }
  return util::Ok();
}

util::Result<Secret> ReadOrCreateSecret(const std::filesystem::path& path, std::size_t length) {
  std::ifstream in(path);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    std::string value = ss.str();
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
    if (value.size() < 16) {
      return util::Fail(util::ErrorCode::kInternal,
                        "secret file " + path.string() + " is too short; delete it to regenerate");
    }
    return Secret{std::move(value), false};
  }
  // Created with link(), which fails if the file appeared meanwhile: two processes starting
  // together on a new data directory must end up with one secret, not the last writer's.
  Secret s{util::RandomUrlSafe(length), true};
  const std::filesystem::path tmp = path.string() + ".new." + util::RandomUrlSafe(8);
  if (auto r = WritePrivateFile(tmp, s.value + "\n"); !r) return tl::unexpected(r.error());
  const int linked = ::link(tmp.c_str(), path.c_str());
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (linked == 0) return s;
  if (link_errno == EEXIST) return ReadOrCreateSecret(path, length);
  errno = link_errno;
  return tl::unexpected(IoError("cannot create", path));
}

}  // namespace sb::app
