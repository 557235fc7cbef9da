// A throwaway SQLite database holding one pipeline and one bot that uses it, for tests of code
// that keeps state per (pipeline, bot, session): conversation memory, the runner, the engine.
//   test::BotStorage db("engine");
//   db.storage().conversations().Load({db.pipeline(), db.bot(), "person_1"}, 10);
#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "storage/sqlite/sqlite_storage.hpp"
#include "util/crypto.hpp"

namespace sb::test {

class BotStorage {
 public:
  // Throws std::runtime_error when the database cannot be set up (the test then fails).
  explicit BotStorage(const std::string& tag)
      : dir_(std::filesystem::temp_directory_path() /
             ("sb-" + tag + "-" + util::RandomUrlSafe(8))) {
    auto st = storage::sqlite::SqliteStorage::Open(
        (dir_ / "db.sqlite").string(),
        util::SecretBox::FromKeyMaterial("unit-test-key-material-0123456789"));
    if (!st) throw std::runtime_error(st.error().message);
    storage_ = std::move(*st);
    domain::Pipeline p;
    p.uuid = util::PipelineId::Generate();
    p.name = "p";
    if (!storage_->pipelines().Insert(p)) throw std::runtime_error("cannot insert the pipeline");
    domain::Bot b;
    b.uuid = util::BotId::Generate();
    b.name = "b";
    b.adapter = "webhook";
    b.use_pipeline_uuid = p.uuid;
    if (!storage_->bots().Insert(b)) throw std::runtime_error("cannot insert the bot");
    pipeline_ = p.uuid;
    bot_ = b.uuid;
  }

  ~BotStorage() {
    storage_->Close();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  BotStorage(const BotStorage&) = delete;
  BotStorage& operator=(const BotStorage&) = delete;

  storage::sqlite::SqliteStorage& storage() { return *storage_; }
  const util::PipelineId& pipeline() const { return pipeline_; }
  const util::BotId& bot() const { return bot_; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<storage::sqlite::SqliteStorage> storage_;
  util::PipelineId pipeline_;
  util::BotId bot_;
};

}  // namespace sb::test
