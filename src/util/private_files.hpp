// Folders and files only the server's user may read: the data directory, the database and its
// WAL files, plugin folders. Modes are given at creation (no chmod race afterwards).
//   auto ok = CreatePrivateDirectories(data_dir / "plugins" / "alice");  // new parts are 0700
//   auto db = CreatePrivateFile(data_dir / "switchboard.db");            // 0600 if new
#pragma once

#include <filesystem>

#include "util/error.hpp"

namespace sb::util {

// Like std::filesystem::create_directories, but every folder it creates has mode 0700 (the
// umask can only narrow that). Folders that exist are left as they are. kInternal on failure.
Result<void> CreatePrivateDirectories(const std::filesystem::path& dir);

// Creates an empty file of mode 0600 when `path` does not exist; an existing regular file is
// narrowed to 0600 (files of older versions were 0644; a file we may not chmod is only logged).
// Never follows a symbolic link at `path`. kInternal when it can be neither opened nor created.
Result<void> CreatePrivateFile(const std::filesystem::path& path);

}  // namespace sb::util
