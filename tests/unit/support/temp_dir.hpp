// A fresh directory under the system's temporary folder for one test, removed with everything in
// it when the test ends.
//   TempDir dir("storage");
//   auto db = SqliteStorage::Open((dir.path() / "db.sqlite").string(), secrets);
#pragma once

#include <filesystem>
#include <string>

#include "util/ids.hpp"

namespace sb::test_support {

class TempDir {
 public:
  explicit TempDir(const std::string& label = "test")
      : path_(std::filesystem::temp_directory_path() / ("sb-" + label + "-" + util::NewUuid())) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace sb::test_support
