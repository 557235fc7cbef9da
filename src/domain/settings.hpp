// Small instance-wide state kept in the database (wizard status and progress, ...).
#pragma once

#include <optional>
#include <string>

#include "util/error.hpp"

namespace sb::domain {

// Implementations are thread-safe and may block: call them from the blocking pool.
class SettingsRepository {
 public:
  virtual ~SettingsRepository() = default;
  virtual util::Result<std::optional<std::string>> Get(const std::string& key) = 0;
  virtual util::Result<void> Set(const std::string& key, const std::string& value) = 0;

  struct Stored {
    std::string value;
    bool created = false;  // true when this call stored `value`
  };
  // The value stored under `key`, storing `value` first when there is none. Atomic across
  // instances sharing the database: every caller gets the one value that won.
  virtual util::Result<Stored> GetOrCreate(const std::string& key, const std::string& value) = 0;
};

}  // namespace sb::domain
