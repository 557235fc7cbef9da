#include "app/core.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "app/data_dir.hpp"
#include "llm/requester_catalogue.hpp"
#include "pipeline/pipeline_template_data.hpp"
#include "platforms/adapter_catalogue.hpp"
#include "storage/sqlite/sqlite_storage.hpp"

#ifndef SB_VERSION
#define SB_VERSION "0.0.0"
#endif

namespace sb::app {

Core::~Core() { Close(); }

void Core::Close() {
  if (close_storage_) {
    close_storage_();
    close_storage_ = nullptr;
  }
}

util::Result<std::unique_ptr<Core>> Core::Open(const CoreOptions& options) {
  std::unique_ptr<Core> core(new Core());
  core->data_dir_ = options.data_dir;
  if (auto r = EnsurePrivateDirectory(core->data_dir_); !r) return tl::unexpected(r.error());

  const auto config_path = options.config_file.value_or(core->data_dir_ / "config.yaml");
  if (!std::filesystem::exists(config_path)) {
    if (auto r = WritePrivateFile(config_path, config::RenderConfig(config::Config{})); !r) {
      return tl::unexpected(r.error());
    }
  }
  core->config_file_ = std::filesystem::absolute(config_path);
  auto cfg = config::LoadConfig(config_path.string(), config::ProcessEnvironment());
  if (!cfg) return tl::unexpected(cfg.error());
  core->config_ = std::move(*cfg);
  if (options.host) core->config_.api.host = *options.host;
  if (options.port) {
    if (*options.port < 0 || *options.port > 65535) {
      return util::Fail(util::ErrorCode::kInvalidArgument, "--port must be 0..65535");
    }
    core->config_.api.port = *options.port;
  }

  auto jwt = ReadOrCreateSecret(core->data_dir_ / "jwt_secret", 48);
  if (!jwt) return tl::unexpected(jwt.error());
  auto recovery = ReadOrCreateSecret(core->data_dir_ / "recovery_key", 32);
  if (!recovery) return tl::unexpected(recovery.error());
  // Seals provider keys and bot secrets in the database: a copy of the database file without
  // this file (mode 0600, next to it) reveals none of them.
  auto secrets_key = ReadOrCreateSecret(core->data_dir_ / "secrets_key", 48);
  if (!secrets_key) return tl::unexpected(secrets_key.error());
  core->first_start_ = recovery->created;
  core->recovery_key_ = recovery->value;

  auto requesters = llm::LoadRequesterCatalogue();
  if (!requesters) return tl::unexpected(requesters.error());
  core->requesters_ = std::move(*requesters);
  auto adapters = platforms::LoadAdapterCatalogue();
  if (!adapters) return tl::unexpected(adapters.error());
  core->adapters_ = std::move(*adapters);
  auto tmpl = pipeline::LoadPipelineTemplate();
  if (!tmpl) return tl::unexpected(tmpl.error());
  core->pipeline_template_ = std::move(*tmpl);

  std::filesystem::path db_path = core->config_.database.sqlite_path;
  if (db_path.is_relative()) db_path = core->data_dir_ / db_path;
  core->database_file_ = std::filesystem::absolute(db_path);
  auto storage = storage::sqlite::SqliteStorage::Open(
      db_path.string(), util::SecretBox::FromKeyMaterial(secrets_key->value));
  if (!storage) return tl::unexpected(storage.error());
  auto* sqlite = storage->get();
  core->close_storage_ = [sqlite] { sqlite->Close(); };
  core->storage_ = std::move(*storage);
  auto& st = *core->storage_;
  const auto& c = core->config_;

  services::AuthOptions auth_options;
  auth_options.jwt_secret = jwt->value;
  auth_options.recovery_key = recovery->value;
  auth_options.jwt_expire_seconds = c.auth.jwt_expire_seconds;
  auth_options.login_max_failures = c.auth.login_max_failures;
  auth_options.login_window_seconds = c.auth.login_window_seconds;
  // Half the cores by default: a login flood keeps the other half for the rest of the API.
  auth_options.max_concurrent_hashes =
      c.auth.max_concurrent_hashes > 0
          ? c.auth.max_concurrent_hashes
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2);
  auth_options.login_rate_per_second = c.auth.login_rate_per_second;
  auth_options.allow_modify_login_info = c.system.allow_modify_login_info;
  core->auth_ = std::make_unique<services::AuthService>(st.users(), st.api_keys(), core->clock_,
                                                        auth_options);
  services::SystemInfo info;
  info.version = SB_VERSION;
  info.debug = c.system.debug;
  info.edition = c.system.edition;
  info.enable_marketplace = c.system.enable_marketplace;
  info.cloud_service_url = c.space.url;
  info.allow_modify_login_info = c.system.allow_modify_login_info;
  info.disable_models_service = c.system.disable_models_service;
  core->system_ = std::make_unique<services::SystemService>(st.settings(), info);
  if (auto r = core->system_->Load(); !r) return tl::unexpected(r.error());
  core->providers_ =
      std::make_unique<services::ProviderService>(st.providers(), core->requesters_, core->clock_);
  core->models_ =
      std::make_unique<services::ModelService>(st.models(), *core->providers_, core->clock_);
  core->pipelines_ = std::make_unique<services::PipelineService>(
      st.pipelines(), core->pipeline_template_, core->clock_);
  core->pipelines_->SetConversations(&st.conversations());
  if (auto r = core->pipelines_->EnsureDefault(); !r) return tl::unexpected(r.error());
  // The runtime is attached by `serve` (BotService::AttachRuntime); CLI helpers run without.
  core->bots_ = std::make_unique<services::BotService>(
      st.bots(), st.bot_logs(), st.pipelines(), core->adapters_, nullptr, core->clock_,
      services::BotServiceOptions{c.system.bot_log_retention});
  core->tasks_ = std::make_unique<services::TaskService>(st.tasks(), core->clock_);
  return core;
}

}  // namespace sb::app
