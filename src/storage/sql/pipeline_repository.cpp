#include "storage/sql/pipeline_repository.hpp"

#include <fmt/format.h>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using util::ErrorCode;

// A macro so each statement is one string literal at compile time (it is also the cache key).
#define SB_PIPELINE_COLUMNS                                                   \
  "uuid, name, description, emoji, config, stages, is_default, for_version, " \
  "extensions_preferences, created_at, updated_at"

util::Result<domain::Pipeline> ReadRow(const Statement& s) {
  domain::Pipeline p;
  p.uuid = util::PipelineId::FromTrusted(s.Text(0));
  p.name = s.Text(1);
  p.description = s.Text(2);
  p.emoji = s.Text(3);
  auto config = ObjectFromText(s.Text(4), "pipeline config");
  if (!config) return tl::make_unexpected(config.error());
  p.config = std::move(*config);
  auto stages = ArrayFromText(s.Text(5), "pipeline stages");
  if (!stages) return tl::make_unexpected(stages.error());
  p.stages = std::move(*stages);
  p.is_default = s.Int64(6) != 0;
  p.for_version = s.Text(7);
  auto prefs = ObjectFromText(s.Text(8), "pipeline extensions_preferences");
  if (!prefs) return tl::make_unexpected(prefs.error());
  p.extensions_preferences = std::move(*prefs);
  p.created_at = TimeAt(s.Int64(9));
  p.updated_at = TimeAt(s.Int64(10));
  return p;
}

util::Error NotFound(const util::PipelineId& id) {
  return util::Error{ErrorCode::kNotFound, fmt::format("pipeline {} not found", id.str())};
}

util::Result<int> CountBots(Connection& c, const util::PipelineId& id) {
  auto n = QueryInt(c, "SELECT COUNT(*) FROM bots WHERE use_pipeline_uuid = ?", id.str());
  if (!n) return tl::make_unexpected(n.error());
  return static_cast<int>(*n);
}

}  // namespace

util::Result<std::vector<domain::Pipeline>> SqlPipelineRepository::List() {
  return db_.Read([](Connection& c) -> util::Result<std::vector<domain::Pipeline>> {
    auto stmt =
        Query(c, "SELECT " SB_PIPELINE_COLUMNS " FROM pipelines ORDER BY created_at, rowid");
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::Pipeline>(*stmt, ReadRow);
  });
}

util::Result<domain::Pipeline> SqlPipelineRepository::Get(const util::PipelineId& id) {
  return db_.Read([&](Connection& c) -> util::Result<domain::Pipeline> {
    auto stmt = Query(c, "SELECT " SB_PIPELINE_COLUMNS " FROM pipelines WHERE uuid = ?", id.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(NotFound(id));
    return ReadRow(*stmt);
  });
}

util::Result<domain::Pipeline> SqlPipelineRepository::GetDefault() {
  return db_.Read([](Connection& c) -> util::Result<domain::Pipeline> {
    auto stmt = Query(c, "SELECT " SB_PIPELINE_COLUMNS " FROM pipelines WHERE is_default = 1");
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return util::Fail(ErrorCode::kNotFound, "no pipeline is the default");
    return ReadRow(*stmt);
  });
}

util::Result<void> SqlPipelineRepository::Insert(const domain::Pipeline& p) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    if (p.is_default) {
      auto taken = Exists(c, "SELECT 1 FROM pipelines WHERE is_default = 1");
      if (!taken) return tl::make_unexpected(taken.error());
      if (*taken) return util::Fail(ErrorCode::kConflict, "a default pipeline already exists");
    }
    auto stmt = Query(
        c,
        "INSERT INTO pipelines (" SB_PIPELINE_COLUMNS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        p.uuid.str(), p.name, p.description, p.emoji, JsonToText(p.config), JsonToText(p.stages),
        p.is_default, p.for_version, JsonToText(p.extensions_preferences), Millis(p.created_at),
        Millis(p.updated_at));
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto r = stmt->Run();
    if (!r && stmt->FailedOnUnique()) {
      return util::Fail(ErrorCode::kConflict,
                        fmt::format("pipeline {} already exists", p.uuid.str()));
    }
    return r;
  });
}

util::Result<void> SqlPipelineRepository::Update(const domain::Pipeline& p) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed = Execute(
        c,
        "UPDATE pipelines SET name = ?, description = ?, emoji = ?, "
        "config = ?, stages = ?, for_version = ?, extensions_preferences = ?, "
        "updated_at = ? WHERE uuid = ?",
        p.name, p.description, p.emoji, JsonToText(p.config), JsonToText(p.stages), p.for_version,
        JsonToText(p.extensions_preferences), Millis(p.updated_at), p.uuid.str());
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return tl::make_unexpected(NotFound(p.uuid));
    return util::Ok();
  });
}

util::Result<void> SqlPipelineRepository::Delete(const util::PipelineId& id) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto stmt = Query(c, "SELECT is_default FROM pipelines WHERE uuid = ?", id.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(NotFound(id));
    if (stmt->Int64(0) != 0) {
      return util::Fail(ErrorCode::kConflict,
                        fmt::format("pipeline {} is the default and cannot be deleted", id.str()));
    }
    auto bots = CountBots(c, id);
    if (!bots) return tl::make_unexpected(bots.error());
    if (*bots > 0) {
      return util::Fail(ErrorCode::kConflict,
                        fmt::format("pipeline {} is used by {} bot(s)", id.str(), *bots));
    }
    auto del = Query(c, "DELETE FROM pipelines WHERE uuid = ?", id.str());
    if (!del) return tl::make_unexpected(del.error());
    auto r = del->Run();
    if (!r && del->FailedOnForeignKey()) {
      return util::Fail(ErrorCode::kConflict,
                        fmt::format("pipeline {} is used by a bot", id.str()));
    }
    return r;
  });
}

util::Result<int> SqlPipelineRepository::CountBotsUsing(const util::PipelineId& id) {
  return db_.Read([&](Connection& c) { return CountBots(c, id); });
}

}  // namespace sb::storage::sql
