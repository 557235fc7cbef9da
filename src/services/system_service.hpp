// Public instance information and the first-run wizard state (kept in settings, cached in
// memory so `GET /system/info` never touches the database).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "domain/change_feed.hpp"
#include "domain/settings.hpp"
#include "util/json.hpp"

namespace sb::services {

struct SystemInfo {
  std::string version;
  bool debug = false;
  std::string edition;
  bool enable_marketplace = true;
  std::string cloud_service_url;
  bool allow_modify_login_info = true;
  bool disable_models_service = false;
  std::string wizard_status = "none";  // none | skipped | completed
  util::Json wizard_progress;          // object or null
};

// Thread-safe. Load() and the setters block; Info() does not.
class SystemService {
 public:
  SystemService(domain::SettingsRepository& settings, SystemInfo defaults);

  // Reads the settings again (at start, and when another instance changed them).
  util::Result<void> Load();
  // Where committed changes are announced to other instances (optional; set before serving).
  void SetChangeFeed(domain::ChangeFeed* feed) { feed_ = feed; }
  SystemInfo Info() const;
  // Grows by one on every change, so callers can cache a rendering of Info().
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // kInvalidArgument unless `status` is none, skipped or completed.
  util::Result<void> SetWizardStatus(const std::string& status);
  // `progress` must be an object or null.
  util::Result<void> SetWizardProgress(const util::Json& progress);

 private:
  domain::SettingsRepository& settings_;
  std::mutex write_mu_;  // serializes the setters
  mutable std::mutex mu_;
  SystemInfo info_;  // guarded by mu_
  std::atomic<std::uint64_t> generation_{1};
  domain::ChangeFeed* feed_ = nullptr;
};

}  // namespace sb::services
