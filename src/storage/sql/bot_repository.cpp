#include "storage/sql/bot_repository.hpp"

#include <fmt/format.h>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using util::ErrorCode;

// A macro so each statement is one string literal at compile time (it is also the cache key).
#define SB_BOT_COLUMNS                                                                           \
  "uuid, name, description, adapter, adapter_config, enable, use_pipeline_uuid, log_retention, " \
  "created_at, updated_at"

std::string ConfigContext(const util::BotId& id) { return "bots.adapter_config:" + id.str(); }

util::Result<domain::Bot> ReadRow(const Statement& s, const util::SecretBox& secrets) {
  domain::Bot b;
  b.uuid = util::BotId::FromTrusted(s.Text(0));
  b.name = s.Text(1);
  b.description = s.Text(2);
  b.adapter = s.Text(3);
  auto config_text = secrets.Open(s.Text(4), ConfigContext(b.uuid));
  if (!config_text) return tl::make_unexpected(config_text.error());
  auto config = ObjectFromText(*config_text, "bot adapter_config");
  if (!config) return tl::make_unexpected(config.error());
  b.adapter_config = std::move(*config);
  b.enable = s.Int64(5) != 0;
  if (!s.IsNull(6)) b.use_pipeline_uuid = util::PipelineId::FromTrusted(s.Text(6));
  if (!s.IsNull(7)) b.log_retention = static_cast<int>(s.Int64(7));
  b.created_at = TimeAt(s.Int64(8));
  b.updated_at = TimeAt(s.Int64(9));
  return b;
}

util::Error NotFound(const util::BotId& id) {
  return util::Error{ErrorCode::kNotFound, fmt::format("bot {} not found", id.str())};
}

util::Error NoPipeline(const util::PipelineId& id) {
  return util::Error{ErrorCode::kInvalidArgument,
                     fmt::format("pipeline {} does not exist", id.str())};
}

std::optional<std::string> PipelineText(const domain::Bot& b) {
  if (!b.use_pipeline_uuid) return std::nullopt;
  return b.use_pipeline_uuid->str();
}

// Inside the write transaction, so the pipeline cannot disappear before the insert or update.
util::Result<void> CheckPipeline(Connection& c, const domain::Bot& b) {
  if (!b.use_pipeline_uuid) return util::Ok();
  auto exists = Exists(c, "SELECT 1 FROM pipelines WHERE uuid = ?", b.use_pipeline_uuid->str());
  if (!exists) return tl::make_unexpected(exists.error());
  if (!*exists) return tl::make_unexpected(NoPipeline(*b.use_pipeline_uuid));
  return util::Ok();
}

}  // namespace

std::string SealBotConfig(const util::SecretBox& secrets, const util::BotId& id,
                          const std::string& config_text) {
  return secrets.Seal(config_text, ConfigContext(id));
}

util::Result<std::vector<domain::Bot>> SqlBotRepository::List() {
  return db_.Read([this](Connection& c) -> util::Result<std::vector<domain::Bot>> {
    auto stmt = Query(c, "SELECT " SB_BOT_COLUMNS " FROM bots ORDER BY created_at, rowid");
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::Bot>(*stmt,
                                    [this](const Statement& s) { return ReadRow(s, secrets_); });
  });
}

util::Result<domain::Bot> SqlBotRepository::Get(const util::BotId& id) {
  return db_.Read([&](Connection& c) -> util::Result<domain::Bot> {
    auto stmt = Query(c, "SELECT " SB_BOT_COLUMNS " FROM bots WHERE uuid = ?", id.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(NotFound(id));
    return ReadRow(*stmt, secrets_);
  });
}

util::Result<void> SqlBotRepository::Insert(const domain::Bot& b) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    if (auto ok = CheckPipeline(c, b); !ok) return ok;
    auto stmt =
        Query(c, "INSERT INTO bots (" SB_BOT_COLUMNS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              b.uuid.str(), b.name, b.description, b.adapter,
              SealBotConfig(secrets_, b.uuid, JsonToText(b.adapter_config)), b.enable,
              PipelineText(b), b.log_retention, Millis(b.created_at), Millis(b.updated_at));
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto r = stmt->Run();
    if (!r && stmt->FailedOnUnique()) {
      return util::Fail(ErrorCode::kConflict, fmt::format("bot {} already exists", b.uuid.str()));
    }
    if (!r && stmt->FailedOnForeignKey()) {
      return tl::make_unexpected(NoPipeline(*b.use_pipeline_uuid));
    }
    return r;
  });
}

util::Result<void> SqlBotRepository::Update(const domain::Bot& b) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto exists = Exists(c, "SELECT 1 FROM bots WHERE uuid = ?", b.uuid.str());
    if (!exists) return tl::make_unexpected(exists.error());
    if (!*exists) return tl::make_unexpected(NotFound(b.uuid));
    if (auto ok = CheckPipeline(c, b); !ok) return ok;
    auto stmt = Query(c,
                      "UPDATE bots SET name = ?, description = ?, adapter = ?, adapter_config = ?, "
                      "enable = ?, use_pipeline_uuid = ?, log_retention = ?, updated_at = ? "
                      "WHERE uuid = ?",
                      b.name, b.description, b.adapter,
                      SealBotConfig(secrets_, b.uuid, JsonToText(b.adapter_config)), b.enable,
                      PipelineText(b), b.log_retention, Millis(b.updated_at), b.uuid.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto r = stmt->Run();
    if (!r && stmt->FailedOnForeignKey()) {
      return tl::make_unexpected(NoPipeline(*b.use_pipeline_uuid));
    }
    return r;
  });
}

util::Result<void> SqlBotRepository::Delete(const util::BotId& id) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed = Execute(c, "DELETE FROM bots WHERE uuid = ?", id.str());
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return tl::make_unexpected(NotFound(id));
    return util::Ok();
  });
}

}  // namespace sb::storage::sql
