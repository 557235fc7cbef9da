// The data directory: created private (0700), holding the config file, the database and the
// instance secrets (files of mode 0600, written atomically).
//   auto secret = ReadOrCreateSecret(dir / "jwt_secret", 48);  // created on first start
#pragma once

#include <filesystem>
#include <string>

#include "util/error.hpp"

namespace sb::app {

struct Secret {
  std::string value;
  bool created = false;  // true on the start that generated it
};

util::Result<void> EnsurePrivateDirectory(const std::filesystem::path& dir);

// Reads the file, or creates it with `length` random URL-safe characters (mode 0600).
util::Result<Secret> ReadOrCreateSecret(const std::filesystem::path& path, std::size_t length);

// Writes `text` to `path` atomically with mode 0600 (temp file + rename).
util::Result<void> WritePrivateFile(const std::filesystem::path& path, const std::string& text);

}  // namespace sb::app
