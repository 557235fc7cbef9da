// The composition root's core: config, data directory, storage and services, built once in
// dependency order and torn down in reverse. `serve` adds the HTTP server on top; the CLI
// helpers (`user create`, `apikey create`) use the core alone.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "domain/catalogue.hpp"
#include "domain/change_feed.hpp"
#include "domain/pipeline_template.hpp"
#include "domain/storage.hpp"
#include "services/auth_service.hpp"
#include "services/bot_service.hpp"
#include "services/model_service.hpp"
#include "services/pipeline_service.hpp"
#include "services/provider_service.hpp"
#include "services/system_service.hpp"
#include "services/task_service.hpp"
#include "util/clock.hpp"
#include "util/secret_box.hpp"

namespace sb::app {

struct CoreOptions {
  std::filesystem::path data_dir = "data";
  std::optional<std::filesystem::path> config_file;  // default: <data_dir>/config.yaml
  std::optional<std::string> host;                   // command-line overrides
  std::optional<int> port;
};

class Core {
 public:
  // Creates the data directory, writes the default config on first start, loads config with
  // environment overrides, reads or creates the secrets, opens storage, applies migrations and
  // builds the services. Errors name the file or key at fault.
  static util::Result<std::unique_ptr<Core>> Open(const CoreOptions& options);
  ~Core();

  const config::Config& config() const { return config_; }
  const std::filesystem::path& data_dir() const { return data_dir_; }
  const std::filesystem::path& config_file() const { return config_file_; }
  // "sqlite" or "postgresql", and the file's path or the URL without its password.
  const char* database_backend() const {
    return config_.database.postgres() ? "postgresql" : "sqlite";
  }
  const std::string& database_description() const { return database_description_; }
  bool first_start() const { return first_start_; }
  // This instance's id: made on first start and kept in the data directory, so a restarted
  // instance takes its own bot leases back at once (each instance needs a data directory of its
  // own).
  const std::string& instance_id() const { return instance_id_; }
  const std::string& recovery_key() const { return recovery_key_; }

  services::AuthService& auth() { return *auth_; }
  services::SystemService& system() { return *system_; }
  services::ProviderService& providers() { return *providers_; }
  services::ModelService& models() { return *models_; }
  services::BotService& bots() { return *bots_; }
  services::PipelineService& pipelines() { return *pipelines_; }
  services::TaskService& tasks() { return *tasks_; }
  domain::Storage& storage() { return *storage_; }
  // Where the services announce committed changes to other instances (PostgreSQL); null on
  // SQLite, where this is the only instance.
  domain::ChangeFeed* change_feed() { return change_feed_.get(); }
  const domain::Catalogue& requesters() const { return requesters_; }
  const domain::Catalogue& adapters() const { return adapters_; }
  const util::Clock& clock() const { return clock_; }

  // Closes the database cleanly. Idempotent.
  void Close();

 private:
  Core() = default;
  util::Result<void> OpenStorage(util::SecretBox box);

  config::Config config_;
  std::filesystem::path data_dir_;
  std::filesystem::path config_file_;
  std::string database_description_;
  bool first_start_ = false;
  std::string instance_id_;
  std::string recovery_key_;
  util::SystemClock clock_;
  domain::Catalogue requesters_;
  domain::Catalogue adapters_;
  domain::PipelineTemplate pipeline_template_;
  std::unique_ptr<domain::Storage> storage_;
  std::function<void()> close_storage_;
  std::unique_ptr<domain::ChangeFeed> change_feed_;  // before the services that point at it
  std::unique_ptr<services::AuthService> auth_;
  std::unique_ptr<services::SystemService> system_;
  std::unique_ptr<services::ProviderService> providers_;
  std::unique_ptr<services::ModelService> models_;
  std::unique_ptr<services::BotService> bots_;
  std::unique_ptr<services::PipelineService> pipelines_;
  std::unique_ptr<services::TaskService> tasks_;
};

}  // namespace sb::app
