#include "services/system_service.hpp"

namespace sb::services {
namespace {

constexpr const char* kWizardStatusKey = "wizard_status";
constexpr const char* kWizardProgressKey = "wizard_progress";
// The progress is echoed by the public /system/info, so a client must not be able to park
// arbitrary amounts of data there. The console's own progress is a few hundred bytes.
constexpr std::size_t kMaxWizardProgressBytes = 4096;

}  // namespace

SystemService::SystemService(domain::SettingsRepository& settings, SystemInfo defaults)
    : settings_(settings), info_(std::move(defaults)) {}

util::Result<void> SystemService::Load() {
  // With the setters' lock: a reload racing a local change must not put back what it replaced.
  std::lock_guard write_lock(write_mu_);
  auto status = settings_.Get(kWizardStatusKey);
  if (!status) return tl::unexpected(status.error());
  auto progress = settings_.Get(kWizardProgressKey);
  if (!progress) return tl::unexpected(progress.error());
  std::lock_guard lock(mu_);
  if (*status) info_.wizard_status = **status;
  // A progress stored before the limit existed is dropped rather than served publicly.
  if (*progress && (*progress)->size() <= kMaxWizardProgressBytes) {
    auto parsed = util::ParseJson(**progress);
    info_.wizard_progress = parsed ? *parsed : util::Json();
  }
  generation_.fetch_add(1, std::memory_order_release);
  return util::Ok();
}

SystemInfo SystemService::Info() const {
  std::lock_guard lock(mu_);
  return info_;
}

util::Result<void> SystemService::SetWizardStatus(const std::string& status) {
  if (status != "none" && status != "skipped" && status != "completed") {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "status must be one of none, skipped, completed");
  }
  // Writers are serialized so memory and database agree; readers of Info() never wait on the
  // database write.
  std::lock_guard write_lock(write_mu_);
  if (auto r = settings_.Set(kWizardStatusKey, status); !r) return r;
  std::lock_guard lock(mu_);
  info_.wizard_status = status;
  generation_.fetch_add(1, std::memory_order_release);
  if (feed_ != nullptr) feed_->Publish(domain::ChangeKind::kSystem, "");
  return util::Ok();
}

util::Result<void> SystemService::SetWizardProgress(const util::Json& progress) {
  if (!progress.is_object() && !progress.is_null()) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "progress must be an object or null");
  }
  auto text = util::SerializeJson(progress);
  if (text.size() > kMaxWizardProgressBytes) {
    return util::Fail(util::ErrorCode::kPayloadTooLarge,
                      "progress is " + std::to_string(text.size()) +
                          " bytes as JSON; the limit is " +
                          std::to_string(kMaxWizardProgressBytes));
  }
  std::lock_guard write_lock(write_mu_);
  if (auto r = settings_.Set(kWizardProgressKey, text); !r) return r;
  std::lock_guard lock(mu_);
  info_.wizard_progress = progress;
  generation_.fetch_add(1, std::memory_order_release);
  if (feed_ != nullptr) feed_->Publish(domain::ChangeKind::kSystem, "");
  return util::Ok();
}

}  // namespace sb::services
