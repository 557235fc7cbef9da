#include "app/core.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "app/data_dir.hpp"
#include "llm/requester_catalogue.hpp"
#include "pipeline/pipeline_template_data.hpp"
#include "platforms/adapter_catalogue.hpp"
#include "storage/postgres/pg_change_feed.hpp"
#include "storage/postgres/pg_storage.hpp"
#include "storage/postgres/pg_url.hpp"
#include "storage/sqlite/sqlite_storage.hpp"
#include "util/crypto.hpp"

#ifndef SB_VERSION
#define SB_VERSION "0.0.0"
#endif

namespace sb::app {

namespace {

constexpr std::size_t kSecretsKeyLength = 48;

util::Result<std::string> SecretsKey(const std::filesystem::path& data_dir) {
  if (const char* env = std::getenv("SWITCHBOARD_SECRETS_KEY"); env != nullptr && *env != 0) {
    if (std::strlen(env) < 32) {
      return util::Fail(util::ErrorCode::kInvalidArgument,
                        "SWITCHBOARD_SECRETS_KEY must be at least 32 characters");
    }
    return std::string(env);
  }
  auto file = ReadOrCreateSecret(data_dir / "secrets_key", kSecretsKeyLength);
  if (!file) return tl::unexpected(file.error());
  return std::move(file->value);
}

// An instance-wide secret shared through the database (PostgreSQL: several instances), sealed
// with the secrets key. The first instance to start stores it, adopting the data directory's file
// of an earlier single-instance setup so that tokens it issued stay valid.
util::Result<Secret> SharedSecret(domain::SettingsRepository& settings, const util::SecretBox& box,
                                  const std::string& key, const std::filesystem::path& legacy_file,
                                  std::size_t length) {
  std::string candidate;
  const bool adopted = std::filesystem::exists(legacy_file);
  if (adopted) {
    auto file = ReadOrCreateSecret(legacy_file, length);
    if (!file) return tl::unexpected(file.error());
    candidate = std::move(file->value);
  } else {
    candidate = util::RandomUrlSafe(length);
  }
  const std::string context = "settings." + key;
  auto stored = settings.GetOrCreate(key, box.Seal(candidate, context));
  if (!stored) return tl::unexpected(stored.error());
  auto opened = box.Open(stored->value, context);
  if (!opened) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "this instance's secrets key does not open the database's shared secrets: "
                      "every instance sharing a database needs the same key "
                      "(SWITCHBOARD_SECRETS_KEY, or a copy of the first instance's "
                      "<data dir>/secrets_key)");
  }
  return Secret{std::move(*opened), stored->created && !adopted};
}

}  // namespace

util::Result<void> Core::OpenStorage(util::SecretBox box) {
  const auto& db = config_.database;
  if (db.postgres()) {
    database_description_ = storage::postgres::MaskPassword(db.url);
    auto storage = storage::postgres::PostgresStorage::Open(db.url, db.pool_size, std::move(box));
    if (!storage) return tl::unexpected(storage.error());
    auto* pg = storage->get();
    close_storage_ = [pg] { pg->Close(); };
    change_feed_ = std::make_unique<storage::postgres::PgChangeFeed>(pg->database(), instance_id_);
    storage_ = std::move(*storage);
    return util::Ok();
  }
  std::filesystem::path db_path = db.sqlite_path;
  if (db_path.is_relative()) db_path = data_dir_ / db_path;
  database_description_ = std::filesystem::absolute(db_path).string();
  auto storage = storage::sqlite::SqliteStorage::Open(db_path.string(), std::move(box));
  if (!storage) return tl::unexpected(storage.error());
  auto* sqlite = storage->get();
  close_storage_ = [sqlite] { sqlite->Close(); };
  storage_ = std::move(*storage);
  return util::Ok();
}

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

  // Seals provider keys, bot secrets and the shared secrets in the database: a copy of the
  // database without this key reveals none of them. Instances sharing one database need the same
  // key: SWITCHBOARD_SECRETS_KEY, or a copy of the first one's file.
  auto secrets_key = SecretsKey(core->data_dir_);
  if (!secrets_key) return tl::unexpected(secrets_key.error());
  auto box = util::SecretBox::FromKeyMaterial(*secrets_key);
  auto instance = ReadOrCreateSecret(core->data_dir_ / "instance_id", 16);
  if (!instance) return tl::unexpected(instance.error());
  core->instance_id_ = instance->value;

  auto requesters = llm::LoadRequesterCatalogue();
  if (!requesters) return tl::unexpected(requesters.error());
  core->requesters_ = std::move(*requesters);
  auto adapters = platforms::LoadAdapterCatalogue();
  if (!adapters) return tl::unexpected(adapters.error());
  core->adapters_ = std::move(*adapters);
  auto tmpl = pipeline::LoadPipelineTemplate();
  if (!tmpl) return tl::unexpected(tmpl.error());
  core->pipeline_template_ = std::move(*tmpl);

  if (auto r = core->OpenStorage(box); !r) return tl::unexpected(r.error());
  auto& st = *core->storage_;
  const auto& c = core->config_;

  auto jwt = c.database.postgres() ? SharedSecret(st.settings(), box, "secret.jwt",
                                                  core->data_dir_ / "jwt_secret", 48)
                                   : ReadOrCreateSecret(core->data_dir_ / "jwt_secret", 48);
  if (!jwt) return tl::unexpected(jwt.error());
  auto recovery = c.database.postgres() ? SharedSecret(st.settings(), box, "secret.recovery_key",
                                                       core->data_dir_ / "recovery_key", 32)
                                        : ReadOrCreateSecret(core->data_dir_ / "recovery_key", 32);
  if (!recovery) return tl::unexpected(recovery.error());
  core->first_start_ = recovery->created;
  core->recovery_key_ = recovery->value;

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
  core->tasks_ =
      std::make_unique<services::TaskService>(st.tasks(), core->clock_, core->instance_id_);
  if (auto* feed = core->change_feed_.get()) {
    core->auth_->SetChangeFeed(feed);
    core->system_->SetChangeFeed(feed);
    core->providers_->SetChangeFeed(feed);
    core->pipelines_->SetChangeFeed(feed);
    core->bots_->SetChangeFeed(feed);
  }
  return core;
}

}  // namespace sb::app
