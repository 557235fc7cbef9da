// Tests of the SQLite storage backend against a real database file per test: every repository
// method and error code, migrations across reopen, transactions and concurrency.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "storage/sql/row_codec.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/sqlite/migrations.hpp"
#include "storage/sqlite/sqlite_storage.hpp"
#include "support/temp_dir.hpp"
#include "util/clock.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace sb::storage::sqlite {
namespace {
using namespace sql;  // the repositories and the Statement they use

namespace fs = std::filesystem;
using domain::ModelKind;
using util::ErrorCode;

util::SecretBox TestSecrets() {
  return util::SecretBox::FromKeyMaterial("storage-test-key-material-0123456789abcdef");
}

util::TimePoint At(std::int64_t ms) { return util::FromUnixMillis(ms); }

util::JsonObject Obj(const char* text) { return util::ParseJson(text).value().as_object(); }

// Fails the test with the error's message when `r` holds an error.
#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message
#define EXPECT_CODE(r, c)                                                                     \
  do {                                                                                        \
    auto&& result_ = (r);                                                                     \
    ASSERT_FALSE(result_) << "expected " << util::ErrorCodeName(c);                           \
    EXPECT_EQ(util::ErrorCodeName(result_.error().code), std::string(util::ErrorCodeName(c))) \
        << result_.error().message;                                                           \
  } while (0)

using sb::test_support::TempDir;

class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open() {
    auto s = SqliteStorage::Open(path_, TestSecrets());
    ASSERT_TRUE(s) << s.error().message;
    storage_ = std::move(*s);
  }
  void Reopen() {
    storage_.reset();
    Open();
  }

  domain::Provider MakeProvider(std::int64_t t, std::string name = "p") {
    domain::Provider p;
    p.uuid = util::ProviderId::Generate();
    p.name = std::move(name);
    p.requester = "openai-chat-completions";
    p.base_url = "https://api.example.com/v1";
    p.api_keys = {"sk-one", "sk-two"};
    p.created_at = At(t);
    p.updated_at = At(t);
    return p;
  }
  domain::Provider AddProvider(std::int64_t t = 1000) {
    auto p = MakeProvider(t);
    EXPECT_TRUE(storage_->providers().Insert(p));
    return p;
  }

  domain::Model MakeModel(ModelKind kind, const util::ProviderId& provider, std::int64_t t = 1000) {
    domain::Model m;
    m.kind = kind;
    m.uuid = util::ModelId::Generate();
    m.name = kind == ModelKind::kLlm ? "gpt-4o" : "text-embedding-3-small";
    m.description = "a model";
    m.provider_uuid = provider;
    m.requester_config = Obj(R"({"model":"gpt-4o","args":{"temperature":0.5}})");
    if (kind == ModelKind::kLlm) m.abilities = {"chat", "vision"};
    m.extra_args = Obj(R"({"top_p":1})");
    m.prefered_ranking = 3;
    if (kind == ModelKind::kEmbedding) m.dimensions = 1536;
    m.created_at = At(t);
    m.updated_at = At(t);
    return m;
  }

  domain::Pipeline MakePipeline(bool is_default, std::int64_t t = 1000) {
    domain::Pipeline p;
    p.uuid = util::PipelineId::Generate();
    p.name = "ChatPipeline";
    p.description = "default pipeline";
    p.emoji = "⚙️";
    p.config = Obj(R"({"ai":{"runner":{"runner":"local-agent"}}})");
    p.stages = util::ParseJson(R"(["trigger","safety"])").value().as_array();
    p.is_default = is_default;
    p.for_version = "v4.0.0";
    p.extensions_preferences = Obj(R"({"enable_all_plugins":true})");
    p.created_at = At(t);
    p.updated_at = At(t);
    return p;
  }
  domain::Pipeline AddPipeline(bool is_default = false, std::int64_t t = 1000) {
    auto p = MakePipeline(is_default, t);
    EXPECT_TRUE(storage_->pipelines().Insert(p));
    return p;
  }

  domain::Bot MakeBot(std::optional<util::PipelineId> pipeline, std::int64_t t = 1000) {
    domain::Bot b;
    b.uuid = util::BotId::Generate();
    b.name = "helper";
    b.description = "a bot";
    b.adapter = "telegram";
    b.adapter_config = Obj(R"({"token":"123:abc","markdown_card":false})");
    b.enable = true;
    b.use_pipeline_uuid = std::move(pipeline);
    b.created_at = At(t);
    b.updated_at = At(t);
    return b;
  }
  domain::Bot AddBot(std::int64_t t = 1000) {
    auto b = MakeBot(std::nullopt, t);
    EXPECT_TRUE(storage_->bots().Insert(b));
    return b;
  }

  domain::Task MakeTask(std::string type, std::string kind, std::int64_t t) {
    domain::Task task;
    task.task_type = std::move(type);
    task.kind = std::move(kind);
    task.name = "install";
    task.label = "Install plugin";
    task.status = domain::TaskStatus::kPending;
    task.metadata = Obj(R"({"progress":0})");
    task.created_at = At(t);
    task.updated_at = At(t);
    return task;
  }

  domain::BotLogEntry Entry(std::string text) {
    domain::BotLogEntry e;
    e.timestamp = At(5000);
    e.level = domain::LogLevel::kWarning;
    e.text = std::move(text);
    e.images = {"https://img/1.png"};
    e.message_session_id = "person_42";
    return e;
  }

  TempDir dir_;
  std::string path_ = (dir_.path() / "data" / "switchboard.db").string();
  std::unique_ptr<SqliteStorage> storage_;
};

// Database and migrations

TEST_F(StorageTest, MigrationsAreRecordedAndNotReappliedOnReopen) {
  storage_.reset();
  auto db = Database::Open(path_);
  ASSERT_OK(db);
  auto count_and_time = [&]() {
    return (*db)->Read(
        [](sql::Connection& c) -> util::Result<std::pair<std::int64_t, std::int64_t>> {
          auto n = QueryInt(c, "SELECT COUNT(*) FROM schema_migrations");
          auto t = QueryInt(c, "SELECT MAX(applied_at) FROM schema_migrations");
          if (!n || !t) return util::Fail(ErrorCode::kInternal, "query failed");
          return std::make_pair(*n, *t);
        });
  };
  auto before = count_and_time();
  ASSERT_OK(before);
  EXPECT_EQ(before->first, static_cast<std::int64_t>(SchemaMigrations().size()));

  auto again = ApplyMigrations(**db, SchemaMigrations(), "test");
  ASSERT_OK(again);
  EXPECT_EQ(*again, 0);
  (*db)->Close();

  Open();  // through SqliteStorage as the server does
  storage_.reset();
  auto db2 = Database::Open(path_);
  ASSERT_OK(db2);
  auto after =
      (*db2)->Read([](sql::Connection& c) -> util::Result<std::pair<std::int64_t, std::int64_t>> {
        auto n = QueryInt(c, "SELECT COUNT(*) FROM schema_migrations");
        auto t = QueryInt(c, "SELECT MAX(applied_at) FROM schema_migrations");
        if (!n || !t) return util::Fail(ErrorCode::kInternal, "query failed");
        return std::make_pair(*n, *t);
      });
  ASSERT_OK(after);
  EXPECT_EQ(*after, *before);
}

TEST_F(StorageTest, NewMigrationAppliesOnceAndFailedMigrationLeavesNothing) {
  storage_.reset();
  auto db = Database::Open(path_);
  ASSERT_OK(db);
  std::vector<Migration> list(SchemaMigrations().begin(), SchemaMigrations().end());
  const int next = list.back().version + 1;
  list.push_back({next, "CREATE TABLE extra (a INTEGER); INSERT INTO extra VALUES (7);"});
  auto first = ApplyMigrations(**db, list, "test");
  ASSERT_OK(first);
  EXPECT_EQ(*first, 1);
  auto second = ApplyMigrations(**db, list, "test");
  ASSERT_OK(second);
  EXPECT_EQ(*second, 0);

  list.push_back({next + 1, "CREATE TABLE half (a INTEGER); INSERT INTO missing VALUES (1);"});
  EXPECT_CODE(ApplyMigrations(**db, list, "test"), ErrorCode::kInternal);
  auto half = (*db)->Read([](sql::Connection& c) {
    return Exists(c, "SELECT 1 FROM sqlite_master WHERE name = 'half'");
  });
  ASSERT_OK(half);
  EXPECT_FALSE(*half) << "a failed migration must roll back entirely";
  auto recorded = (*db)->Read([&](sql::Connection& c) {
    return QueryInt(c, "SELECT COUNT(*) FROM schema_migrations WHERE version = ?", next + 1);
  });
  ASSERT_OK(recorded);
  EXPECT_EQ(*recorded, 0);
}

TEST_F(StorageTest, RefusesSchemaNewerThanBuild) {
  storage_.reset();
  {
    auto db = Database::Open(path_);
    ASSERT_OK(db);
    ASSERT_OK((*db)->Write([](sql::Connection& c) {
      return Execute(c, "INSERT INTO schema_migrations (version, applied_at) VALUES (9999, 0)");
    }));
  }
  auto s = SqliteStorage::Open(path_, TestSecrets());
  EXPECT_CODE(s, ErrorCode::kInternal);
}

TEST_F(StorageTest, WriteRollsBackOnErrorAndOnException) {
  auto& db_path = path_;
  storage_.reset();
  auto db = Database::Open(db_path);
  ASSERT_OK(db);
  Database& d = **db;

  auto failed = d.Write([](sql::Connection& c) -> util::Result<void> {
    auto r = Execute(c, "INSERT INTO settings (key, value) VALUES ('a', '1')");
    if (!r) return tl::make_unexpected(r.error());
    return util::Fail(ErrorCode::kConflict, "changed my mind");
  });
  EXPECT_CODE(failed, ErrorCode::kConflict);

  EXPECT_THROW(d.Write([](sql::Connection& c) -> util::Result<void> {
    auto r = Execute(c, "INSERT INTO settings (key, value) VALUES ('b', '1')");
    if (!r) return tl::make_unexpected(r.error());
    throw std::runtime_error("boom");
  }),
               std::runtime_error);

  auto n = d.Read([](sql::Connection& c) { return QueryInt(c, "SELECT COUNT(*) FROM settings"); });
  ASSERT_OK(n);
  EXPECT_EQ(*n, 0);

  // The write connection is usable again after both rollbacks.
  ASSERT_OK(d.Write([](sql::Connection& c) {
    return Execute(c, "INSERT INTO settings (key, value) VALUES ('c', '1')");
  }));
}

TEST_F(StorageTest, ReadConnectionsCannotWrite) {
  storage_.reset();
  auto db = Database::Open(path_);
  ASSERT_OK(db);
  auto r = (*db)->Read([](sql::Connection& c) {
    return Execute(c, "INSERT INTO settings (key, value) VALUES ('a', '1')");
  });
  EXPECT_CODE(r, ErrorCode::kInternal);
}

TEST_F(StorageTest, StatementCacheHandlesNestedUseOfTheSameSql) {
  storage_.reset();
  auto db = Database::Open(path_);
  ASSERT_OK(db);
  ASSERT_OK((*db)->Write([](sql::Connection& c) -> util::Result<void> {
    for (int i = 0; i < 3; ++i) {
      auto r = Execute(c, "INSERT INTO settings (key, value) VALUES (?, ?)",
                       "k" + std::to_string(i), std::to_string(i));
      if (!r) return tl::make_unexpected(r.error());
    }
    return util::Ok();
  }));
  auto sum = (*db)->Read([](sql::Connection& c) -> util::Result<std::int64_t> {
    constexpr const char* kSql = "SELECT value FROM settings ORDER BY key";
    auto outer = c.Prepare(kSql);
    if (!outer) return tl::make_unexpected(outer.error());
    std::int64_t total = 0;
    for (;;) {
      auto row = outer->Step();
      if (!row) return tl::make_unexpected(row.error());
      if (!*row) break;
      // Same SQL while the outer statement is mid-iteration: must not reset it.
      auto inner = c.Prepare(kSql);
      if (!inner) return tl::make_unexpected(inner.error());
      auto inner_row = inner->Step();
      if (!inner_row || !*inner_row) return util::Fail(ErrorCode::kInternal, "inner failed");
      total += std::stoi(outer->Text(0)) * 10 + std::stoi(inner->Text(0));
    }
    return total;
  });
  ASSERT_OK(sum);
  EXPECT_EQ(*sum, 30);  // (0+1+2)*10 + 3*0
}

TEST_F(StorageTest, ErrorsDoNotLeakBoundValues) {
  ASSERT_OK(storage_->users().Insert({"admin", "hash", At(1), At(1)}, false));
  storage_.reset();
  auto db = Database::Open(path_);
  ASSERT_OK(db);
  auto r = (*db)->Write([](sql::Connection& c) {
    return Execute(c, "INSERT INTO users (username, password_hash, created_at) VALUES (?, ?, 1)",
                   "admin", "super-secret-value");
  });
  EXPECT_CODE(r, ErrorCode::kInternal);
  EXPECT_EQ(r.error().message.find("super-secret-value"), std::string::npos) << r.error().message;
}

TEST_F(StorageTest, CallsAfterCloseAreUnavailable) {
  storage_->Close();
  storage_->Close();  // idempotent
  EXPECT_CODE(storage_->settings().Get("a"), ErrorCode::kUnavailable);
  EXPECT_CODE(storage_->settings().Set("a", "b"), ErrorCode::kUnavailable);
  // Close checkpointed the WAL into the main file.
  std::error_code ec;
  const auto wal_size = fs::file_size(path_ + "-wal", ec);
  EXPECT_TRUE(ec || wal_size == 0);
}

TEST_F(StorageTest, OpenFailsForUnusablePath) {
  auto s = SqliteStorage::Open((dir_.path() / "data").string(),
                               TestSecrets());  // a directory, not a file
  EXPECT_CODE(s, ErrorCode::kInternal);
}

TEST_F(StorageTest, DatabaseFilesAreTheOwnersOnly) {
  storage_.reset();
  auto mode = [](const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 0777;
  };
  const std::string fresh = (dir_.path() / "fresh" / "nested" / "new.db").string();
  const mode_t old_umask = ::umask(022);
  {
    auto s = SqliteStorage::Open(fresh, TestSecrets());
    ASSERT_OK(s);
    EXPECT_EQ(mode((dir_.path() / "fresh").string()), 0700u);
    EXPECT_EQ(mode((dir_.path() / "fresh" / "nested").string()), 0700u);
    EXPECT_EQ(mode(fresh), 0600u);
    EXPECT_EQ(mode(fresh + "-wal"), 0600u);
    EXPECT_EQ(mode(fresh + "-shm"), 0600u);
  }
  // A database of an older version (0644 files) is narrowed when opened.
  ASSERT_EQ(::chmod(path_.c_str(), 0644), 0);
  auto again = SqliteStorage::Open(path_, TestSecrets());
  ASSERT_OK(again);
  for (const char* suffix : {"", "-wal", "-shm"}) EXPECT_EQ(mode(path_ + suffix), 0600u) << suffix;
  ::umask(old_umask);
}

// Secrets at rest

// Every stored value of a column, read with a plain connection as a thief with a copy would.
std::string RawColumn(const std::string& db_path, const char* sql) {
  auto db = Database::Open(db_path);
  EXPECT_TRUE(db) << db.error().message;
  auto text = (*db)->Read([&](sql::Connection& c) -> util::Result<std::string> {
    auto stmt = Query(c, sql);
    if (!stmt) return tl::make_unexpected(stmt.error());
    std::string all;
    for (;;) {
      auto row = stmt->Step();
      if (!row) return tl::make_unexpected(row.error());
      if (!*row) return all;
      all += stmt->Text(0) + "\n";
    }
  });
  EXPECT_TRUE(text) << text.error().message;
  return text ? *text : std::string();
}

TEST_F(StorageTest, ProviderKeysAndBotConfigsAreSealedAtRest) {
  auto p = MakeProvider(1000);
  p.api_keys = {"sk-provider-secret-4242"};
  ASSERT_OK(storage_->providers().Insert(p));
  auto inline_provider = MakeProvider(1001, "inline");
  inline_provider.api_keys = {"sk-inline-secret-4343"};
  ASSERT_OK(storage_->models().InsertWithProvider(
      inline_provider, MakeModel(ModelKind::kLlm, inline_provider.uuid)));
  auto b = MakeBot(std::nullopt);
  b.adapter_config = Obj(R"({"token":"123:bot-token-secret","markdown_card":false})");
  ASSERT_OK(storage_->bots().Insert(b));
  p.api_keys = {"sk-updated-secret-4444"};
  ASSERT_OK(storage_->providers().Update(p));

  Reopen();
  auto got = storage_->providers().Get(p.uuid);
  ASSERT_OK(got);
  EXPECT_EQ(got->provider.api_keys, std::vector<std::string>{"sk-updated-secret-4444"});
  auto got_inline = storage_->providers().Get(inline_provider.uuid);
  ASSERT_OK(got_inline);
  EXPECT_EQ(got_inline->provider.api_keys, inline_provider.api_keys);
  auto bot = storage_->bots().Get(b.uuid);
  ASSERT_OK(bot);
  EXPECT_EQ(bot->adapter_config, b.adapter_config);
  storage_.reset();

  const auto keys = RawColumn(path_, "SELECT api_keys FROM providers");
  const auto configs = RawColumn(path_, "SELECT adapter_config FROM bots");
  EXPECT_EQ(keys.find("secret"), std::string::npos) << keys;
  EXPECT_EQ(configs.find("secret"), std::string::npos) << configs;
  EXPECT_EQ(configs.find("markdown_card"), std::string::npos) << configs;
  EXPECT_EQ(keys.rfind("sbenc1:", 0), 0u) << keys;
  // Nor anywhere in the file (a free page or the WAL may keep an old row).
  std::ifstream in(path_, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.find("sk-updated-secret"), std::string::npos);
  EXPECT_EQ(bytes.find("bot-token-secret"), std::string::npos);

  // Another key opens nothing: the data directory's key file is needed.
  auto other = SqliteStorage::Open(path_, util::SecretBox::FromKeyMaterial("another key entirely"));
  ASSERT_OK(other);
  EXPECT_CODE((*other)->providers().Get(p.uuid), ErrorCode::kInternal);
  EXPECT_CODE((*other)->bots().List(), ErrorCode::kInternal);
}

TEST_F(StorageTest, PlaintextSecretsOfAnOlderVersionAreSealedAtOpen) {
  const auto p = AddProvider();
  const auto b = AddBot();
  storage_.reset();
  {
    // What a version before sealing wrote.
    auto db = Database::Open(path_);
    ASSERT_OK(db);
    ASSERT_OK((*db)->Write([&](sql::Connection& c) -> util::Result<void> {
      auto r = Execute(c, "UPDATE providers SET api_keys = '[\"sk-old-plain\"]' WHERE uuid = ?",
                       p.uuid.str());
      if (!r) return tl::make_unexpected(r.error());
      r = Execute(c, "UPDATE bots SET adapter_config = '{\"token\":\"old-plain-token\"}'");
      if (!r) return tl::make_unexpected(r.error());
      return util::Ok();
    }));
  }
  Open();
  auto got = storage_->providers().Get(p.uuid);
  ASSERT_OK(got);
  EXPECT_EQ(got->provider.api_keys, std::vector<std::string>{"sk-old-plain"});
  auto bot = storage_->bots().Get(b.uuid);
  ASSERT_OK(bot);
  EXPECT_EQ(bot->adapter_config, Obj(R"({"token":"old-plain-token"})"));
  storage_.reset();
  EXPECT_EQ(RawColumn(path_, "SELECT api_keys FROM providers").find("sk-old-plain"),
            std::string::npos);
  EXPECT_EQ(RawColumn(path_, "SELECT adapter_config FROM bots").find("old-plain-token"),
            std::string::npos);
  // Not even in the file's free space or a left-over WAL.
  for (const char* suffix : {"", "-wal"}) {
    std::ifstream in(path_ + suffix, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes.find("sk-old-plain"), std::string::npos) << suffix;
    EXPECT_EQ(bytes.find("old-plain-token"), std::string::npos) << suffix;
  }
}

// Providers

TEST_F(StorageTest, ProviderCrudAndOrdering) {
  auto& repo = storage_->providers();
  auto later = MakeProvider(2000, "later");
  auto earlier = MakeProvider(1000, "earlier");
  ASSERT_OK(repo.Insert(later));
  ASSERT_OK(repo.Insert(earlier));

  auto list = repo.List();
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].provider.name, "earlier");
  EXPECT_EQ((*list)[1].provider.name, "later");

  auto got = repo.Get(earlier.uuid);
  ASSERT_OK(got);
  EXPECT_EQ(got->provider.uuid, earlier.uuid);
  EXPECT_EQ(got->provider.requester, earlier.requester);
  EXPECT_EQ(got->provider.base_url, earlier.base_url);
  EXPECT_EQ(got->provider.api_keys, earlier.api_keys);
  EXPECT_EQ(got->provider.created_at, earlier.created_at);
  EXPECT_EQ(got->llm_count, 0);

  earlier.name = "renamed";
  earlier.api_keys = {};
  earlier.created_at = At(99999);  // must be ignored
  earlier.updated_at = At(3000);
  ASSERT_OK(repo.Update(earlier));
  got = repo.Get(earlier.uuid);
  ASSERT_OK(got);
  EXPECT_EQ(got->provider.name, "renamed");
  EXPECT_TRUE(got->provider.api_keys.empty());
  EXPECT_EQ(got->provider.created_at, At(1000));
  EXPECT_EQ(got->provider.updated_at, At(3000));

  EXPECT_CODE(repo.Insert(later), ErrorCode::kConflict);
  auto missing = MakeProvider(1);
  EXPECT_CODE(repo.Get(missing.uuid), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Update(missing), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Delete(missing.uuid), ErrorCode::kNotFound);

  ASSERT_OK(repo.Delete(later.uuid));
  EXPECT_CODE(repo.Get(later.uuid), ErrorCode::kNotFound);
}

TEST_F(StorageTest, ProviderCountsModelsAndRefusesDeleteWhileReferenced) {
  auto p = AddProvider();
  auto other = AddProvider(2000);
  auto& models = storage_->models();
  ASSERT_OK(models.Insert(MakeModel(ModelKind::kLlm, p.uuid)));
  ASSERT_OK(models.Insert(MakeModel(ModelKind::kLlm, p.uuid)));
  auto emb = MakeModel(ModelKind::kEmbedding, p.uuid);
  ASSERT_OK(models.Insert(emb));

  auto list = storage_->providers().List();
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].llm_count, 2);
  EXPECT_EQ((*list)[0].embedding_count, 1);
  EXPECT_EQ((*list)[1].llm_count, 0);
  EXPECT_EQ((*list)[1].embedding_count, 0);
  auto got = storage_->providers().Get(p.uuid);
  ASSERT_OK(got);
  EXPECT_EQ(got->llm_count, 2);
  EXPECT_EQ(got->embedding_count, 1);

  EXPECT_CODE(storage_->providers().Delete(p.uuid), ErrorCode::kConflict);
  EXPECT_TRUE(storage_->providers().Get(p.uuid));
  ASSERT_OK(storage_->providers().Delete(other.uuid));
}

// Models

TEST_F(StorageTest, ModelCrudRoundTripsEveryField) {
  auto p = AddProvider();
  auto& repo = storage_->models();
  auto m = MakeModel(ModelKind::kEmbedding, p.uuid);
  ASSERT_OK(repo.Insert(m));
  auto got = repo.Get(ModelKind::kEmbedding, m.uuid);
  ASSERT_OK(got);
  EXPECT_EQ(got->kind, ModelKind::kEmbedding);
  EXPECT_EQ(got->name, m.name);
  EXPECT_EQ(got->description, m.description);
  EXPECT_EQ(got->provider_uuid, p.uuid);
  EXPECT_EQ(got->requester_config, m.requester_config);
  EXPECT_EQ(got->abilities, m.abilities);
  EXPECT_EQ(got->extra_args, m.extra_args);
  EXPECT_EQ(got->prefered_ranking, 3);
  EXPECT_EQ(got->dimensions, std::optional<int>(1536));
  EXPECT_EQ(got->created_at, m.created_at);

  auto p2 = AddProvider(2000);
  m.name = "renamed";
  m.provider_uuid = p2.uuid;
  m.dimensions.reset();
  m.abilities = {"x"};
  m.updated_at = At(7000);
  ASSERT_OK(repo.Update(m));
  got = repo.Get(ModelKind::kEmbedding, m.uuid);
  ASSERT_OK(got);
  EXPECT_EQ(got->name, "renamed");
  EXPECT_EQ(got->provider_uuid, p2.uuid);
  EXPECT_FALSE(got->dimensions.has_value());
  EXPECT_EQ(got->abilities, std::vector<std::string>{"x"});
  EXPECT_EQ(got->updated_at, At(7000));

  EXPECT_CODE(repo.Insert(m), ErrorCode::kConflict);
  ASSERT_OK(repo.Delete(ModelKind::kEmbedding, m.uuid));
  EXPECT_CODE(repo.Get(ModelKind::kEmbedding, m.uuid), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Delete(ModelKind::kEmbedding, m.uuid), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Update(m), ErrorCode::kNotFound);
}

TEST_F(StorageTest, ModelOfTheOtherKindIsAbsent) {
  auto p = AddProvider();
  auto& repo = storage_->models();
  auto llm = MakeModel(ModelKind::kLlm, p.uuid);
  ASSERT_OK(repo.Insert(llm));
  EXPECT_CODE(repo.Get(ModelKind::kEmbedding, llm.uuid), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Delete(ModelKind::kEmbedding, llm.uuid), ErrorCode::kNotFound);
  auto as_embedding = llm;
  as_embedding.kind = ModelKind::kEmbedding;
  EXPECT_CODE(repo.Update(as_embedding), ErrorCode::kNotFound);
  EXPECT_TRUE(repo.Get(ModelKind::kLlm, llm.uuid));
}

TEST_F(StorageTest, ModelWithItsOwnProviderIsStoredWhollyOrNotAtAll) {
  auto& repo = storage_->models();
  auto provider = MakeProvider(1000, "inline");
  auto m = MakeModel(ModelKind::kLlm, provider.uuid);
  ASSERT_OK(repo.InsertWithProvider(provider, m));
  EXPECT_TRUE(storage_->providers().Get(provider.uuid));
  EXPECT_TRUE(repo.Get(ModelKind::kLlm, m.uuid));

  // The model insert fails (its uuid is taken): the new provider must not stay behind.
  auto second = MakeProvider(1000, "second");
  auto clash = MakeModel(ModelKind::kLlm, second.uuid);
  clash.uuid = m.uuid;
  EXPECT_CODE(repo.InsertWithProvider(second, clash), ErrorCode::kConflict);
  EXPECT_CODE(storage_->providers().Get(second.uuid), ErrorCode::kNotFound);
}

TEST_F(StorageTest, ModelWithMissingProviderIsInvalid) {
  auto p = AddProvider();
  auto& repo = storage_->models();
  auto ghost = util::ProviderId::Generate();
  auto m = MakeModel(ModelKind::kLlm, ghost);
  auto r = repo.Insert(m);
  EXPECT_CODE(r, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, "provider " + ghost.str() + " does not exist");

  m.provider_uuid = p.uuid;
  ASSERT_OK(repo.Insert(m));
  m.provider_uuid = ghost;
  EXPECT_CODE(repo.Update(m), ErrorCode::kInvalidArgument);
  auto got = repo.Get(ModelKind::kLlm, m.uuid);
  ASSERT_OK(got);
  EXPECT_EQ(got->provider_uuid, p.uuid);
}

TEST_F(StorageTest, ModelListFiltersByKindAndProviderOldestFirst) {
  auto a = AddProvider(1);
  auto b = AddProvider(2);
  auto& repo = storage_->models();
  auto m3 = MakeModel(ModelKind::kLlm, a.uuid, 3000);
  auto m1 = MakeModel(ModelKind::kLlm, b.uuid, 1000);
  auto m2 = MakeModel(ModelKind::kLlm, a.uuid, 2000);
  auto e1 = MakeModel(ModelKind::kEmbedding, a.uuid, 500);
  for (const auto& m : {m3, m1, m2, e1}) ASSERT_OK(repo.Insert(m));

  auto all = repo.List(ModelKind::kLlm, std::nullopt);
  ASSERT_OK(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].uuid, m1.uuid);
  EXPECT_EQ((*all)[1].uuid, m2.uuid);
  EXPECT_EQ((*all)[2].uuid, m3.uuid);

  auto of_a = repo.List(ModelKind::kLlm, a.uuid);
  ASSERT_OK(of_a);
  ASSERT_EQ(of_a->size(), 2u);
  EXPECT_EQ((*of_a)[0].uuid, m2.uuid);
  EXPECT_EQ((*of_a)[1].uuid, m3.uuid);

  auto embeddings = repo.List(ModelKind::kEmbedding, std::nullopt);
  ASSERT_OK(embeddings);
  ASSERT_EQ(embeddings->size(), 1u);
  EXPECT_EQ((*embeddings)[0].uuid, e1.uuid);
  auto none = repo.List(ModelKind::kEmbedding, b.uuid);
  ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
}

// Pipelines

TEST_F(StorageTest, PipelineCrudAndDefault) {
  auto& repo = storage_->pipelines();
  EXPECT_CODE(repo.GetDefault(), ErrorCode::kNotFound);
  auto def = AddPipeline(true, 2000);
  auto other = AddPipeline(false, 1000);

  auto got = repo.GetDefault();
  ASSERT_OK(got);
  EXPECT_EQ(got->uuid, def.uuid);
  EXPECT_TRUE(got->is_default);
  EXPECT_EQ(got->config, def.config);
  EXPECT_EQ(got->stages, def.stages);
  EXPECT_EQ(got->emoji, def.emoji);
  EXPECT_EQ(got->for_version, def.for_version);
  EXPECT_EQ(got->extensions_preferences, def.extensions_preferences);

  auto list = repo.List();
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].uuid, other.uuid);
  EXPECT_EQ((*list)[1].uuid, def.uuid);

  EXPECT_CODE(repo.Insert(MakePipeline(true)), ErrorCode::kConflict);
  EXPECT_CODE(repo.Insert(other), ErrorCode::kConflict);

  // Update never moves the default flag.
  other.is_default = true;
  other.name = "renamed";
  other.stages = util::JsonArray{};
  ASSERT_OK(repo.Update(other));
  auto updated = repo.Get(other.uuid);
  ASSERT_OK(updated);
  EXPECT_FALSE(updated->is_default);
  EXPECT_EQ(updated->name, "renamed");
  EXPECT_TRUE(updated->stages.empty());
  EXPECT_EQ(repo.GetDefault()->uuid, def.uuid);

  auto missing = MakePipeline(false);
  EXPECT_CODE(repo.Get(missing.uuid), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Update(missing), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Delete(missing.uuid), ErrorCode::kNotFound);

  EXPECT_CODE(repo.Delete(def.uuid), ErrorCode::kConflict);
  ASSERT_OK(repo.Delete(other.uuid));
  EXPECT_CODE(repo.Get(other.uuid), ErrorCode::kNotFound);
}

TEST_F(StorageTest, PipelineUsedByBotCannotBeDeleted) {
  auto pipeline = AddPipeline(false);
  auto& bots = storage_->bots();
  auto b1 = MakeBot(pipeline.uuid);
  auto b2 = MakeBot(pipeline.uuid);
  ASSERT_OK(bots.Insert(b1));
  ASSERT_OK(bots.Insert(b2));
  auto n = storage_->pipelines().CountBotsUsing(pipeline.uuid);
  ASSERT_OK(n);
  EXPECT_EQ(*n, 2);
  EXPECT_CODE(storage_->pipelines().Delete(pipeline.uuid), ErrorCode::kConflict);

  ASSERT_OK(bots.Delete(b1.uuid));
  b2.use_pipeline_uuid.reset();
  ASSERT_OK(bots.Update(b2));
  EXPECT_EQ(*storage_->pipelines().CountBotsUsing(pipeline.uuid), 0);
  ASSERT_OK(storage_->pipelines().Delete(pipeline.uuid));
}

TEST_F(StorageTest, OnlyOneDefaultPipelineUnderConcurrentInserts) {
  constexpr int kThreads = 8;
  std::atomic<int> ok{0}, conflict{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      auto r = storage_->pipelines().Insert(MakePipeline(true));
      if (r) {
        ++ok;
      } else if (r.error().code == ErrorCode::kConflict) {
        ++conflict;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(conflict.load(), kThreads - 1);
}

// Bots

TEST_F(StorageTest, BotCrud) {
  auto pipeline = AddPipeline(true);
  auto& repo = storage_->bots();
  auto late = MakeBot(pipeline.uuid, 2000);
  auto early = MakeBot(std::nullopt, 1000);
  ASSERT_OK(repo.Insert(late));
  ASSERT_OK(repo.Insert(early));

  auto list = repo.List();
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].uuid, early.uuid);
  EXPECT_EQ((*list)[1].uuid, late.uuid);

  auto got = repo.Get(late.uuid);
  ASSERT_OK(got);
  EXPECT_EQ(got->name, late.name);
  EXPECT_EQ(got->adapter, "telegram");
  EXPECT_EQ(got->adapter_config, late.adapter_config);
  EXPECT_TRUE(got->enable);
  EXPECT_EQ(got->use_pipeline_uuid, late.use_pipeline_uuid);
  EXPECT_FALSE(repo.Get(early.uuid)->use_pipeline_uuid.has_value());

  late.enable = false;
  late.use_pipeline_uuid.reset();
  late.adapter_config = Obj(R"({"token":"new"})");
  late.created_at = At(1);
  late.updated_at = At(9000);
  ASSERT_OK(repo.Update(late));
  got = repo.Get(late.uuid);
  ASSERT_OK(got);
  EXPECT_FALSE(got->enable);
  EXPECT_FALSE(got->use_pipeline_uuid.has_value());
  EXPECT_EQ(got->adapter_config, late.adapter_config);
  EXPECT_EQ(got->created_at, At(2000));
  EXPECT_EQ(got->updated_at, At(9000));

  EXPECT_CODE(repo.Insert(late), ErrorCode::kConflict);
  auto missing = MakeBot(std::nullopt);
  EXPECT_CODE(repo.Get(missing.uuid), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Update(missing), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Delete(missing.uuid), ErrorCode::kNotFound);
  ASSERT_OK(repo.Delete(late.uuid));
  EXPECT_CODE(repo.Get(late.uuid), ErrorCode::kNotFound);
}

TEST_F(StorageTest, BotWithUnknownPipelineIsInvalid) {
  auto& repo = storage_->bots();
  auto ghost = util::PipelineId::Generate();
  EXPECT_CODE(repo.Insert(MakeBot(ghost)), ErrorCode::kInvalidArgument);
  auto b = AddBot();
  b.use_pipeline_uuid = ghost;
  EXPECT_CODE(repo.Update(b), ErrorCode::kInvalidArgument);
  auto list = repo.List();
  ASSERT_OK(list);
  EXPECT_EQ(list->size(), 1u);
}

// Bot logs

TEST_F(StorageTest, BotLogAppendAndPage) {
  auto bot = AddBot();
  auto& logs = storage_->bot_logs();
  for (int i = 1; i <= 10; ++i) {
    auto seq = logs.Append(bot.uuid, Entry("line " + std::to_string(i)), 100);
    ASSERT_OK(seq);
    EXPECT_EQ(*seq, i);
  }

  auto newest = logs.Page(bot.uuid, -1, 3);
  ASSERT_OK(newest);
  EXPECT_EQ(newest->total_count, 10);
  ASSERT_EQ(newest->entries.size(), 3u);
  EXPECT_EQ(newest->entries[0].seq_id, 8);  // oldest first
  EXPECT_EQ(newest->entries[2].seq_id, 10);
  EXPECT_EQ(newest->entries[2].text, "line 10");
  EXPECT_EQ(newest->entries[2].level, domain::LogLevel::kWarning);
  EXPECT_EQ(newest->entries[2].images, std::vector<std::string>{"https://img/1.png"});
  EXPECT_EQ(newest->entries[2].message_session_id, "person_42");
  EXPECT_EQ(newest->entries[2].timestamp, At(5000));

  auto older = logs.Page(bot.uuid, 5, 3);
  ASSERT_OK(older);
  ASSERT_EQ(older->entries.size(), 3u);
  EXPECT_EQ(older->entries[0].seq_id, 3);
  EXPECT_EQ(older->entries[2].seq_id, 5);

  auto start = logs.Page(bot.uuid, 2, 10);
  ASSERT_OK(start);
  ASSERT_EQ(start->entries.size(), 2u);
  EXPECT_EQ(start->entries[0].seq_id, 1);

  auto beyond = logs.Page(bot.uuid, 1000, 2);
  ASSERT_OK(beyond);
  ASSERT_EQ(beyond->entries.size(), 2u);
  EXPECT_EQ(beyond->entries[1].seq_id, 10);

  auto zero = logs.Page(bot.uuid, -1, 0);
  ASSERT_OK(zero);
  EXPECT_TRUE(zero->entries.empty());
  EXPECT_EQ(zero->total_count, 10);

  auto unknown = logs.Page(util::BotId::Generate(), -1, 10);
  ASSERT_OK(unknown);
  EXPECT_TRUE(unknown->entries.empty());
  EXPECT_EQ(unknown->total_count, 0);
}

TEST_F(StorageTest, BotLogRetentionKeepsNewestAndSeqNeverRestarts) {
  auto bot = AddBot();
  auto other = AddBot();
  auto& logs = storage_->bot_logs();
  for (int i = 1; i <= 10; ++i) ASSERT_OK(logs.Append(bot.uuid, Entry("x"), 4));
  ASSERT_OK(logs.Append(other.uuid, Entry("y"), 4));

  auto page = logs.Page(bot.uuid, -1, 100);
  ASSERT_OK(page);
  EXPECT_EQ(page->total_count, 4);
  ASSERT_EQ(page->entries.size(), 4u);
  EXPECT_EQ(page->entries.front().seq_id, 7);
  EXPECT_EQ(page->entries.back().seq_id, 10);

  // Shrinking retention drops more; the next number still follows the last one given.
  auto seq = logs.Append(bot.uuid, Entry("z"), 1);
  ASSERT_OK(seq);
  EXPECT_EQ(*seq, 11);
  page = logs.Page(bot.uuid, -1, 100);
  ASSERT_OK(page);
  EXPECT_EQ(page->total_count, 1);
  EXPECT_EQ(page->entries.at(0).seq_id, 11);

  // Sequences are per bot and survive a restart.
  Reopen();
  auto next = storage_->bot_logs().Append(bot.uuid, Entry("after restart"), 4);
  ASSERT_OK(next);
  EXPECT_EQ(*next, 12);
  auto other_next = storage_->bot_logs().Append(other.uuid, Entry("y"), 4);
  ASSERT_OK(other_next);
  EXPECT_EQ(*other_next, 2);
}

TEST_F(StorageTest, BotLogBatchKeepsOrderPerBotSkipsDeletedBotsAndTrims) {
  auto a = AddBot();
  auto b = AddBot();
  auto& logs = storage_->bot_logs();
  ASSERT_OK(logs.Append(a.uuid, Entry("a0"), 100));
  using Item = domain::BotLogRepository::BatchItem;
  std::vector<Item> batch{{a.uuid, Entry("a1"), 3},
                          {b.uuid, Entry("b1"), 100},
                          {util::BotId::Generate(), Entry("nobody"), 100},
                          {a.uuid, Entry("a2"), 3},
                          {a.uuid, Entry("a3"), 3},
                          {a.uuid, Entry("a4"), 3}};
  ASSERT_OK(logs.AppendBatch(batch));
  auto page = logs.Page(a.uuid, -1, 100);
  ASSERT_OK(page);
  ASSERT_EQ(page->entries.size(), 3u);  // a0..a4 trimmed to the newest 3
  EXPECT_EQ(page->entries[0].seq_id, 3);
  EXPECT_EQ(page->entries[0].text, "a2");
  EXPECT_EQ(page->entries[2].seq_id, 5);
  EXPECT_EQ(page->entries[2].text, "a4");
  auto other = logs.Page(b.uuid, -1, 100);
  ASSERT_OK(other);
  ASSERT_EQ(other->entries.size(), 1u);
  EXPECT_EQ(other->entries[0].seq_id, 1);
  auto next = logs.Append(a.uuid, Entry("a5"), 100);
  ASSERT_OK(next);
  EXPECT_EQ(*next, 6);
  EXPECT_CODE(logs.AppendBatch({{a.uuid, Entry("x"), 0}}), ErrorCode::kInvalidArgument);
}

TEST_F(StorageTest, BotLogErrors) {
  auto& logs = storage_->bot_logs();
  EXPECT_CODE(logs.Append(util::BotId::Generate(), Entry("x"), 10), ErrorCode::kNotFound);
  auto bot = AddBot();
  EXPECT_CODE(logs.Append(bot.uuid, Entry("x"), 0), ErrorCode::kInvalidArgument);
  auto page = logs.Page(bot.uuid, -1, 10);
  ASSERT_OK(page);
  EXPECT_EQ(page->total_count, 0);
}

TEST_F(StorageTest, DeletingBotDeletesItsLogAndSequence) {
  auto bot = AddBot();
  for (int i = 0; i < 3; ++i) ASSERT_OK(storage_->bot_logs().Append(bot.uuid, Entry("x"), 10));
  ASSERT_OK(storage_->bots().Delete(bot.uuid));
  auto page = storage_->bot_logs().Page(bot.uuid, -1, 10);
  ASSERT_OK(page);
  EXPECT_EQ(page->total_count, 0);
  storage_.reset();
  auto db = Database::Open(path_);
  ASSERT_OK(db);
  auto seqs = (*db)->Read(
      [](sql::Connection& c) { return QueryInt(c, "SELECT COUNT(*) FROM bot_log_sequences"); });
  ASSERT_OK(seqs);
  EXPECT_EQ(*seqs, 0);
}

// Tasks

TEST_F(StorageTest, TaskInsertGetUpdate) {
  auto& repo = storage_->tasks();
  auto id1 = repo.Insert(MakeTask("plugin-operation", "plugin-install", 1000));
  auto id2 = repo.Insert(MakeTask("plugin-operation", "plugin-install", 1000));
  ASSERT_OK(id1);
  ASSERT_OK(id2);
  EXPECT_GT(*id2, *id1);

  auto got = repo.Get(*id1);
  ASSERT_OK(got);
  EXPECT_EQ(got->id, *id1);
  EXPECT_EQ(got->kind, "plugin-install");
  EXPECT_EQ(got->status, domain::TaskStatus::kPending);
  EXPECT_TRUE(got->result.is_null());
  EXPECT_EQ(got->metadata, Obj(R"({"progress":0})"));

  domain::Task t = *got;
  t.status = domain::TaskStatus::kSucceeded;
  t.current_action = "done";
  t.log = "step 1\nstep 2\n";
  t.metadata = Obj(R"({"progress":100})");
  t.result = util::ParseJson(R"({"plugin":"x"})").value();
  t.updated_at = At(4000);
  ASSERT_OK(repo.Update(t));
  got = repo.Get(*id1);
  ASSERT_OK(got);
  EXPECT_EQ(got->status, domain::TaskStatus::kSucceeded);
  EXPECT_EQ(got->current_action, "done");
  EXPECT_EQ(got->log, t.log);
  EXPECT_EQ(got->metadata, t.metadata);
  EXPECT_EQ(got->result, t.result);
  EXPECT_EQ(got->created_at, At(1000));
  EXPECT_EQ(got->updated_at, At(4000));

  EXPECT_CODE(repo.Get(999), ErrorCode::kNotFound);
  t.id = 999;
  EXPECT_CODE(repo.Update(t), ErrorCode::kNotFound);
}

TEST_F(StorageTest, TaskListNewestFirstWithFilters) {
  auto& repo = storage_->tasks();
  auto a = *repo.Insert(MakeTask("plugin-operation", "plugin-install", 1000));
  auto b = *repo.Insert(MakeTask("plugin-operation", "plugin-delete", 2000));
  auto c = *repo.Insert(MakeTask("kb-operation", "plugin-install", 3000));
  auto d = *repo.Insert(MakeTask("plugin-operation", "plugin-install", 3000));

  auto ids = [](const std::vector<domain::Task>& tasks) {
    std::vector<std::int64_t> out;
    for (const auto& t : tasks) out.push_back(t.id);
    return out;
  };
  auto all = repo.List({});
  ASSERT_OK(all);
  EXPECT_EQ(ids(*all), (std::vector<std::int64_t>{d, c, b, a}));
  auto by_type = repo.List({"plugin-operation", std::nullopt});
  ASSERT_OK(by_type);
  EXPECT_EQ(ids(*by_type), (std::vector<std::int64_t>{d, b, a}));
  auto by_kind = repo.List({std::nullopt, "plugin-install"});
  ASSERT_OK(by_kind);
  EXPECT_EQ(ids(*by_kind), (std::vector<std::int64_t>{d, c, a}));
  auto both = repo.List({"plugin-operation", "plugin-install"});
  ASSERT_OK(both);
  EXPECT_EQ(ids(*both), (std::vector<std::int64_t>{d, a}));
  auto none = repo.List({"nothing", std::nullopt});
  ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
}

TEST_F(StorageTest, TaskFailUnfinished) {
  auto& repo = storage_->tasks();
  auto pending = *repo.Insert(MakeTask("t", "k", 1));
  auto running_task = MakeTask("t", "k", 2);
  running_task.status = domain::TaskStatus::kRunning;
  auto running = *repo.Insert(running_task);
  auto done_task = MakeTask("t", "k", 3);
  done_task.status = domain::TaskStatus::kSucceeded;
  auto done = *repo.Insert(done_task);

  auto n = repo.FailUnfinished("interrupted by restart", At(9000));
  ASSERT_OK(n);
  EXPECT_EQ(*n, 2);
  for (auto id : {pending, running}) {
    auto t = repo.Get(id);
    ASSERT_OK(t);
    EXPECT_EQ(t->status, domain::TaskStatus::kFailed);
    EXPECT_EQ(t->exception, "interrupted by restart");
    EXPECT_EQ(t->updated_at, At(9000));
  }
  auto t = repo.Get(done);
  ASSERT_OK(t);
  EXPECT_EQ(t->status, domain::TaskStatus::kSucceeded);
  EXPECT_EQ(*repo.FailUnfinished("again", At(9001)), 0);
}

// Users, API keys, settings

TEST_F(StorageTest, UserRepository) {
  auto& repo = storage_->users();
  EXPECT_EQ(*repo.Count(), 0);
  EXPECT_CODE(repo.Get("admin"), ErrorCode::kNotFound);
  ASSERT_OK(repo.Insert({"admin", "$argon2id$1", At(1000), At(1000)}, true));
  EXPECT_EQ(*repo.Count(), 1);
  EXPECT_CODE(repo.Insert({"second", "h", At(1), At(1)}, true), ErrorCode::kConflict);
  EXPECT_CODE(repo.Insert({"admin", "h", At(1), At(1)}, false), ErrorCode::kConflict);
  ASSERT_OK(repo.Insert({"second", "h", At(1), At(1)}, false));
  EXPECT_EQ(*repo.Count(), 2);

  auto u = repo.Get("admin");
  ASSERT_OK(u);
  EXPECT_EQ(u->password_hash, "$argon2id$1");
  EXPECT_EQ(u->created_at, At(1000));
  EXPECT_EQ(u->token_generation, 0);

  ASSERT_OK(repo.UpdatePassword("admin", "$argon2id$2", At(5000)));
  u = repo.Get("admin");
  ASSERT_OK(u);
  EXPECT_EQ(u->password_hash, "$argon2id$2");
  EXPECT_EQ(u->created_at, At(1000));
  EXPECT_EQ(u->updated_at, At(5000));
  EXPECT_EQ(u->token_generation, 1);  // every change ends the tokens issued before
  ASSERT_OK(repo.UpdatePassword("admin", "$argon2id$3", At(6000)));
  EXPECT_EQ(repo.Get("admin")->token_generation, 2);
  EXPECT_EQ(repo.Get("second")->token_generation, 0);
  EXPECT_CODE(repo.UpdatePassword("nobody", "h", At(1)), ErrorCode::kNotFound);
}

TEST_F(StorageTest, OnlyIfNoneAdmitsExactlyOneConcurrentFirstUser) {
  constexpr int kThreads = 16;
  std::atomic<int> ok{0}, conflict{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto r = storage_->users().Insert({"user" + std::to_string(i), "h", At(i), At(i)}, true);
      if (r) {
        ++ok;
      } else if (r.error().code == ErrorCode::kConflict) {
        ++conflict;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(conflict.load(), kThreads - 1);
  EXPECT_EQ(*storage_->users().Count(), 1);
}

TEST_F(StorageTest, ApiKeyRepository) {
  auto& repo = storage_->api_keys();
  domain::ApiKey k1{0, "ci", "for CI", "hash-1", "lbk_abcd...wxyz", At(2000), At(2000)};
  domain::ApiKey k2{0, "ops", "", "hash-2", "lbk_efgh...stuv", At(1000), At(1000)};
  auto id1 = repo.Insert(k1);
  auto id2 = repo.Insert(k2);
  ASSERT_OK(id1);
  ASSERT_OK(id2);
  EXPECT_NE(*id1, *id2);

  auto list = repo.List();
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, *id2);  // oldest first
  EXPECT_EQ((*list)[1].id, *id1);

  auto got = repo.Get(*id1);
  ASSERT_OK(got);
  EXPECT_EQ(got->name, "ci");
  EXPECT_EQ(got->description, "for CI");
  EXPECT_EQ(got->key_hash, "hash-1");
  EXPECT_EQ(got->masked_key, "lbk_abcd...wxyz");
  auto found = repo.FindByHash("hash-2");
  ASSERT_OK(found);
  EXPECT_EQ(found->id, *id2);
  EXPECT_CODE(repo.FindByHash("hash-3"), ErrorCode::kNotFound);

  auto dup = k2;
  dup.name = "dup";
  EXPECT_CODE(repo.Insert(dup), ErrorCode::kConflict);

  k1.id = *id1;
  k1.name = "ci-renamed";
  k1.description = "changed";
  k1.key_hash = "ignored";
  k1.updated_at = At(3000);
  ASSERT_OK(repo.Update(k1));
  got = repo.Get(*id1);
  ASSERT_OK(got);
  EXPECT_EQ(got->name, "ci-renamed");
  EXPECT_EQ(got->description, "changed");
  EXPECT_EQ(got->key_hash, "hash-1");

  ASSERT_OK(repo.Delete(*id1));
  EXPECT_CODE(repo.Get(*id1), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Delete(*id1), ErrorCode::kNotFound);
  EXPECT_CODE(repo.Update(k1), ErrorCode::kNotFound);
}

TEST_F(StorageTest, SettingsRepository) {
  auto& repo = storage_->settings();
  auto missing = repo.Get("wizard_status");
  ASSERT_OK(missing);
  EXPECT_FALSE(missing->has_value());
  ASSERT_OK(repo.Set("wizard_status", "pending"));
  ASSERT_OK(repo.Set("wizard_status", "done"));
  ASSERT_OK(repo.Set("empty", ""));
  EXPECT_EQ(repo.Get("wizard_status")->value_or("?"), "done");
  EXPECT_EQ(repo.Get("empty")->value_or("?"), "");
}

// Persistence and concurrency

TEST_F(StorageTest, DataPersistsAcrossReopen) {
  auto provider = AddProvider();
  auto model = MakeModel(ModelKind::kLlm, provider.uuid);
  ASSERT_OK(storage_->models().Insert(model));
  auto pipeline = AddPipeline(true);
  auto bot = MakeBot(pipeline.uuid);
  ASSERT_OK(storage_->bots().Insert(bot));
  ASSERT_OK(storage_->bot_logs().Append(bot.uuid, Entry("hello"), 10));
  auto task = storage_->tasks().Insert(MakeTask("t", "k", 1));
  ASSERT_OK(task);
  ASSERT_OK(storage_->users().Insert({"admin", "h", At(1), At(1)}, true));
  auto key = storage_->api_keys().Insert({0, "k", "", "hash", "m", At(1), At(1)});
  ASSERT_OK(key);
  ASSERT_OK(storage_->settings().Set("a", "b"));

  Reopen();
  auto p = storage_->providers().Get(provider.uuid);
  ASSERT_OK(p);
  EXPECT_EQ(p->llm_count, 1);
  EXPECT_EQ(storage_->models().Get(ModelKind::kLlm, model.uuid)->name, model.name);
  EXPECT_EQ(storage_->pipelines().GetDefault()->uuid, pipeline.uuid);
  EXPECT_EQ(storage_->bots().Get(bot.uuid)->use_pipeline_uuid, pipeline.uuid);
  EXPECT_EQ(storage_->bot_logs().Page(bot.uuid, -1, 10)->entries.at(0).text, "hello");
  EXPECT_TRUE(storage_->tasks().Get(*task));
  EXPECT_TRUE(storage_->users().Get("admin"));
  EXPECT_EQ(storage_->api_keys().FindByHash("hash")->id, *key);
  EXPECT_EQ(storage_->settings().Get("a")->value_or(""), "b");
}

TEST_F(StorageTest, ConcurrentWritersLoseNoRows) {
  constexpr int kThreads = 16;
  constexpr int kPerThread = 40;
  auto bot = AddBot();
  std::atomic<int> failures{0};
  std::atomic<bool> writing{true};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < kPerThread; ++j) {
        if (!storage_->tasks().Insert(MakeTask("t" + std::to_string(i), "k", j))) ++failures;
        if (!storage_->bot_logs().Append(bot.uuid, Entry("x"), 1'000'000)) ++failures;
        if (!storage_->settings().Set("s" + std::to_string(i), std::to_string(j))) ++failures;
      }
    });
  }
  // Readers run alongside the writers (WAL) and never see a torn state.
  std::thread reader([&] {
    while (writing) {
      auto page = storage_->bot_logs().Page(bot.uuid, -1, 5);
      if (!page || (!page->entries.empty() && page->entries.back().seq_id != page->total_count)) {
        ++failures;
      }
    }
  });
  for (auto& t : threads) t.join();
  writing = false;
  reader.join();
  EXPECT_EQ(failures.load(), 0);

  auto tasks = storage_->tasks().List({});
  ASSERT_OK(tasks);
  EXPECT_EQ(tasks->size(), static_cast<std::size_t>(kThreads * kPerThread));
  std::set<std::int64_t> task_ids;
  for (const auto& t : *tasks) task_ids.insert(t.id);
  EXPECT_EQ(task_ids.size(), tasks->size());

  auto page = storage_->bot_logs().Page(bot.uuid, -1, kThreads * kPerThread + 10);
  ASSERT_OK(page);
  EXPECT_EQ(page->total_count, kThreads * kPerThread);
  ASSERT_EQ(page->entries.size(), static_cast<std::size_t>(kThreads * kPerThread));
  for (std::size_t i = 0; i < page->entries.size(); ++i) {
    EXPECT_EQ(page->entries[i].seq_id, static_cast<std::int64_t>(i + 1));
  }
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(storage_->settings().Get("s" + std::to_string(i))->value_or(""),
              std::to_string(kPerThread - 1));
  }
}

// Conversations

domain::ChatMessage Message(std::string role, std::string text) {
  domain::ChatMessage m;
  m.role = std::move(role);
  m.content.push_back({domain::ContentPart::Kind::kText, std::move(text), ""});
  return m;
}

domain::ConversationTurn Turn(std::string role, std::string text, std::int64_t t = 7000) {
  return {Message(std::move(role), std::move(text)), At(t)};
}

// One round: the user's message and the assistant's reply.
std::vector<domain::ConversationTurn> Round(const std::string& name) {
  return {Turn("user", name + "?"), Turn("assistant", name + "!")};
}

// A turn as one line, so a failed comparison shows the whole conversation readably.
std::string Describe(const domain::ConversationTurn& turn) {
  const auto& m = turn.message;
  std::string out = m.role + " @" + std::to_string(util::ToUnixMillis(turn.created_at));
  for (const auto& part : m.content) {
    out += part.kind == domain::ContentPart::Kind::kText ? " text:" + part.text
                                                         : " image:" + part.image_url;
  }
  for (const auto& call : m.tool_calls) {
    out += " call:" + call.id + "," + call.name + "," + call.arguments;
  }
  if (!m.tool_call_id.empty()) out += " answers:" + m.tool_call_id;
  return out;
}

std::vector<std::string> Describe(const std::vector<domain::ConversationTurn>& turns) {
  std::vector<std::string> out;
  for (const auto& t : turns) out.push_back(Describe(t));
  return out;
}

// The user messages' texts of `turns`, in order: one per round.
std::vector<std::string> UserTexts(const std::vector<domain::ConversationTurn>& turns) {
  std::vector<std::string> out;
  for (const auto& t : turns) {
    if (t.message.role == "user") out.push_back(t.message.content.at(0).text);
  }
  return out;
}

// A pipeline and a bot to hold conversations; Key() names a session of theirs.
class ConversationTest : public StorageTest {
 protected:
  domain::ConversationKey Key(std::string session = "person_42") {
    return {pipeline_.uuid, bot_.uuid, std::move(session)};
  }
  // Turns stored in the file, trimmed or not, read with the storage closed.
  std::int64_t StoredTurns() {
    storage_.reset();
    std::int64_t n = -1;
    {
      auto db = Database::Open(path_);
      EXPECT_TRUE(db);
      auto count = (*db)->Read([](sql::Connection& c) {
        return QueryInt(c, "SELECT COUNT(*) FROM conversation_turns");
      });
      EXPECT_TRUE(count);
      if (count) n = *count;
    }
    Open();
    return n;
  }

  void SetUp() override {
    StorageTest::SetUp();
    pipeline_ = AddPipeline();
    bot_ = AddBot();
  }

  domain::Pipeline pipeline_;
  domain::Bot bot_;
};

TEST_F(ConversationTest, RoundTripsImagesAndToolCalls) {
  domain::ChatMessage user = Message("user", "what is in this picture? \"quoted\" \u00e9\u4e2d");
  user.content.push_back({domain::ContentPart::Kind::kImage, "", "https://img/cat.png"});
  user.content.push_back(
      {domain::ContentPart::Kind::kImage, "", "data:image/png;base64,iVBORw0KGgo="});
  domain::ChatMessage call;
  call.role = "assistant";
  call.tool_calls = {{"call_1", "describe", R"({"detail":"high","n":[1,2]})"},
                     {"call_2", "search", "{}"}};
  domain::ChatMessage result1 = Message("tool", R"({"animal":"cat"})");
  result1.tool_call_id = "call_1";
  domain::ChatMessage result2 = Message("tool", "no results");
  result2.tool_call_id = "call_2";
  domain::ChatMessage empty;  // a reply with no content at all still round-trips
  empty.role = "assistant";
  std::vector<domain::ConversationTurn> turns = {{user, At(1000)},
                                                 {call, At(1001)},
                                                 {result1, At(1002)},
                                                 {result2, At(1003)},
                                                 {Message("assistant", "A cat."), At(1004)},
                                                 {empty, At(1005)}};

  auto& repo = storage_->conversations();
  ASSERT_OK(repo.Append(Key(), turns, 10));
  auto loaded = repo.Load(Key(), 10);
  ASSERT_OK(loaded);
  EXPECT_EQ(Describe(*loaded), Describe(turns));
  ASSERT_EQ(loaded->size(), turns.size());
  EXPECT_EQ((*loaded)[0].message.content[2].kind, domain::ContentPart::Kind::kImage);
  EXPECT_TRUE((*loaded)[5].message.content.empty());

  auto other = repo.Load(Key("group_42"), 10);
  ASSERT_OK(other);
  EXPECT_TRUE(other->empty()) << "sessions are apart";
  auto none = repo.Load(Key(), 0);
  ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
}

TEST_F(ConversationTest, BadArgumentsAndUnknownOwnersStoreNothing) {
  auto& repo = storage_->conversations();
  for (const char* bad : {"", "person_", "group_", "user_1", "42"}) {
    SCOPED_TRACE(bad);
    EXPECT_CODE(repo.Append(Key(bad), Round("a"), 5), ErrorCode::kInvalidArgument);
    EXPECT_CODE(repo.Load(Key(bad), 5), ErrorCode::kInvalidArgument);
    EXPECT_CODE(repo.Clear(Key(bad)), ErrorCode::kInvalidArgument);
  }
  EXPECT_CODE(repo.Append(Key(), Round("a"), -1), ErrorCode::kInvalidArgument);
  EXPECT_CODE(repo.Load(Key(), -1), ErrorCode::kInvalidArgument);

  auto ghost_bot = Key();
  ghost_bot.bot = util::BotId::Generate();
  EXPECT_CODE(repo.Append(ghost_bot, Round("a"), 5), ErrorCode::kNotFound);
  auto ghost_pipeline = Key();
  ghost_pipeline.pipeline = util::PipelineId::Generate();
  EXPECT_CODE(repo.Append(ghost_pipeline, Round("a"), 5), ErrorCode::kNotFound);
  EXPECT_EQ(StoredTurns(), 0);
}

TEST_F(ConversationTest, TrimsToMaxRoundsAcrossAppends) {
  auto& repo = storage_->conversations();
  // Messages before the first user message count as one round.
  ASSERT_OK(repo.Append(Key(), {Turn("assistant", "welcome")}, 3));
  for (int i = 1; i <= 5; ++i) {
    ASSERT_OK(repo.Append(Key(), {Turn("user", "u" + std::to_string(i))}, 3));
    // A round grows across appends: tool turns and the reply join the last user message's round.
    ASSERT_OK(repo.Append(Key(), {Turn("assistant", "calling"), Turn("tool", "result")}, 3));
    ASSERT_OK(repo.Append(Key(), {Turn("assistant", "r" + std::to_string(i))}, 3));
    auto all = repo.Load(Key(), 100);
    ASSERT_OK(all);
    EXPECT_EQ(all->size(), static_cast<std::size_t>(std::min(i + 1, 3) * 4 - (i < 3 ? 3 : 0)));
  }
  auto all = repo.Load(Key(), 100);
  ASSERT_OK(all);
  EXPECT_EQ(UserTexts(*all), (std::vector<std::string>{"u3", "u4", "u5"}));
  EXPECT_EQ(all->front().message.content[0].text, "u3");
  EXPECT_EQ(all->back().message.content[0].text, "r5");

  // Several rounds in one append, more than are kept: only the newest survive.
  std::vector<domain::ConversationTurn> batch;
  for (const char* name : {"a", "b", "c", "d"}) {
    for (auto& t : Round(name)) batch.push_back(t);
  }
  ASSERT_OK(repo.Append(Key(), batch, 2));
  all = repo.Load(Key(), 100);
  ASSERT_OK(all);
  EXPECT_EQ(UserTexts(*all), (std::vector<std::string>{"c?", "d?"}));
  EXPECT_EQ(all->size(), 4u);
  EXPECT_EQ(StoredTurns(), 4) << "trimmed turns are deleted, not hidden";

  // A smaller limit with nothing to add still trims; a larger one brings nothing back.
  ASSERT_OK(storage_->conversations().Append(Key(), {}, 1));
  EXPECT_EQ(UserTexts(*storage_->conversations().Load(Key(), 100)), std::vector<std::string>{"d?"});
  // Zero rounds keep nothing.
  ASSERT_OK(storage_->conversations().Append(Key(), Round("e"), 0));
  EXPECT_TRUE(storage_->conversations().Load(Key(), 100)->empty());
  EXPECT_EQ(StoredTurns(), 0);
}

TEST_F(ConversationTest, LoadWithFewerRoundsReturnsTheNewestOldestFirst) {
  auto& repo = storage_->conversations();
  for (const char* name : {"a", "b", "c", "d"}) ASSERT_OK(repo.Append(Key(), Round(name), 10));
  ASSERT_OK(repo.Append(Key(), {Turn("assistant", "calling"), Turn("tool", "result")}, 10));

  auto two = repo.Load(Key(), 2);
  ASSERT_OK(two);
  EXPECT_EQ(UserTexts(*two), (std::vector<std::string>{"c?", "d?"}));
  auto one = repo.Load(Key(), 1);
  ASSERT_OK(one);
  std::vector<std::string> texts;
  for (const auto& t : *one) texts.push_back(t.message.role + ":" + t.message.content[0].text);
  EXPECT_EQ(texts, (std::vector<std::string>{"user:d?", "assistant:d!", "assistant:calling",
                                             "tool:result"}));
  auto more = repo.Load(Key(), 50);
  ASSERT_OK(more);
  EXPECT_EQ(more->size(), 10u);
  // Loading never trims.
  EXPECT_EQ(repo.Load(Key(), 50)->size(), 10u);
}

TEST_F(ConversationTest, BatchItemWithAMissingOwnerFailsAloneAndWritesNothing) {
  auto& repo = storage_->conversations();
  auto ghost_bot = Key("person_7");
  ghost_bot.bot = util::BotId::Generate();
  auto ghost_pipeline = Key("person_8");
  ghost_pipeline.pipeline = util::PipelineId::Generate();
  auto results = repo.AppendBatch({{Key("person_1"), Round("a"), 5},
                                   {ghost_bot, Round("x"), 5},
                                   {ghost_pipeline, Round("y"), 5},
                                   {Key("person_1"), Round("b"), 5},
                                   {Key("group_2"), Round("c"), 0},
                                   {Key("person_3"), {}, 5}});
  ASSERT_EQ(results.size(), 6u);
  ASSERT_OK(results[0]);
  EXPECT_CODE(results[1], ErrorCode::kNotFound);
  EXPECT_NE(results[1].error().message.find("bot"), std::string::npos);
  EXPECT_CODE(results[2], ErrorCode::kNotFound);
  EXPECT_NE(results[2].error().message.find("pipeline"), std::string::npos);
  ASSERT_OK(results[3]);
  ASSERT_OK(results[4]);
  ASSERT_OK(results[5]);
  EXPECT_EQ(UserTexts(*repo.Load(Key("person_1"), 10)), (std::vector<std::string>{"a?", "b?"}));
  EXPECT_TRUE(repo.Load(Key("group_2"), 10)->empty());
  EXPECT_EQ(StoredTurns(), 4) << "only person_1's two rounds";
}

TEST_F(ConversationTest, ClearClearPipelineAndClearBot) {
  auto& repo = storage_->conversations();
  auto other_pipeline = AddPipeline();
  auto other_bot = AddBot();
  const domain::ConversationKey k1 = Key("person_1");
  const domain::ConversationKey k2 = Key("group_2");
  const domain::ConversationKey k3 = {pipeline_.uuid, other_bot.uuid, "person_1"};
  const domain::ConversationKey k4 = {other_pipeline.uuid, bot_.uuid, "person_1"};
  for (const auto& k : {k1, k2, k3, k4}) ASSERT_OK(repo.Append(k, Round("a"), 5));
  auto size = [&](const domain::ConversationKey& k) { return repo.Load(k, 5).value().size(); };

  ASSERT_OK(repo.Clear(k1));
  EXPECT_EQ(size(k1), 0u);
  EXPECT_EQ(size(k2), 2u);
  ASSERT_OK(repo.Clear(k1)) << "clearing twice is fine";
  ASSERT_OK(repo.Clear(Key("person_404")));

  ASSERT_OK(repo.ClearPipeline(pipeline_.uuid));
  EXPECT_EQ(size(k2), 0u);
  EXPECT_EQ(size(k3), 0u);
  EXPECT_EQ(size(k4), 2u);

  ASSERT_OK(repo.Append(k3, Round("b"), 5));
  ASSERT_OK(repo.ClearBot(bot_.uuid));
  EXPECT_EQ(size(k4), 0u);
  EXPECT_EQ(size(k3), 2u) << "other bots keep theirs";
  ASSERT_OK(repo.ClearPipeline(util::PipelineId::Generate()));
  ASSERT_OK(repo.ClearBot(util::BotId::Generate()));

  // A cleared conversation starts afresh.
  ASSERT_OK(repo.Append(k1, Round("c"), 5));
  EXPECT_EQ(UserTexts(repo.Load(k1, 5).value()), std::vector<std::string>{"c?"});
  EXPECT_EQ(StoredTurns(), 4);
}

TEST_F(ConversationTest, DeletingBotOrPipelineDeletesItsConversations) {
  auto& repo = storage_->conversations();
  auto other_bot = AddBot();
  ASSERT_OK(repo.Append(Key(), Round("a"), 5));
  ASSERT_OK(repo.Append({pipeline_.uuid, other_bot.uuid, "person_1"}, Round("b"), 5));
  ASSERT_OK(storage_->bots().Delete(bot_.uuid));
  EXPECT_TRUE(storage_->conversations().Load(Key(), 5)->empty());
  EXPECT_EQ(StoredTurns(), 2);

  ASSERT_OK(storage_->pipelines().Delete(pipeline_.uuid));
  EXPECT_EQ(StoredTurns(), 0);
  storage_.reset();
  auto db = Database::Open(path_);
  ASSERT_OK(db);
  auto rows = (*db)->Read(
      [](sql::Connection& c) { return QueryInt(c, "SELECT COUNT(*) FROM conversations"); });
  ASSERT_OK(rows);
  EXPECT_EQ(*rows, 0);
}

TEST_F(ConversationTest, PersistsAcrossReopen) {
  ASSERT_OK(storage_->conversations().Append(Key(), Round("a"), 2));
  ASSERT_OK(storage_->conversations().Append(Key(), Round("b"), 2));
  auto before = storage_->conversations().Load(Key(), 2);
  ASSERT_OK(before);

  Reopen();
  auto after = storage_->conversations().Load(Key(), 2);
  ASSERT_OK(after);
  EXPECT_EQ(Describe(*after), Describe(*before));
  // The round count carries on from where it was: the next round pushes out the oldest.
  ASSERT_OK(storage_->conversations().Append(Key(), Round("c"), 2));
  EXPECT_EQ(UserTexts(storage_->conversations().Load(Key(), 5).value()),
            (std::vector<std::string>{"b?", "c?"}));
}

TEST_F(ConversationTest, ConcurrentAppendsLoseNothing) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto& repo = storage_->conversations();
      for (int j = 0; j < kRounds; ++j) {
        const std::string name = std::to_string(i) + "." + std::to_string(j);
        if (!repo.Append(Key("person_" + std::to_string(i)), Round(name), 1000)) ++failures;
        // All threads also share one group session: each append must land whole.
        if (!repo.Append(Key("group_1"), Round(name), 1000)) ++failures;
        if (!repo.Load(Key("group_1"), 3)) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);

  auto& repo = storage_->conversations();
  for (int i = 0; i < kThreads; ++i) {
    auto turns = repo.Load(Key("person_" + std::to_string(i)), 1000);
    ASSERT_OK(turns);
    ASSERT_EQ(turns->size(), static_cast<std::size_t>(2 * kRounds));
    for (int j = 0; j < kRounds; ++j) {
      const std::string name = std::to_string(i) + "." + std::to_string(j);
      EXPECT_EQ((*turns)[2 * j].message.content[0].text, name + "?");
      EXPECT_EQ((*turns)[2 * j + 1].message.content[0].text, name + "!");
    }
  }
  auto shared = repo.Load(Key("group_1"), 1000);
  ASSERT_OK(shared);
  ASSERT_EQ(shared->size(), static_cast<std::size_t>(2 * kThreads * kRounds));
  std::set<std::string> seen;
  for (std::size_t k = 0; k < shared->size(); k += 2) {
    const std::string question = (*shared)[k].message.content[0].text;
    const std::string answer = (*shared)[k + 1].message.content[0].text;
    EXPECT_EQ(question.substr(0, question.size() - 1), answer.substr(0, answer.size() - 1));
    seen.insert(question);
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kThreads * kRounds));
}

TEST_F(StorageTest, ConversationMigrationAppliesOnceToPreviousSchema) {
  storage_.reset();
  fs::remove_all(fs::path(path_).parent_path());
  fs::create_directories(fs::path(path_).parent_path());
  std::vector<Migration> previous;
  for (const auto& m : SchemaMigrations()) {
    if (m.version < 2) previous.push_back(m);
  }
  auto pipeline = util::PipelineId::Generate();
  auto bot = util::BotId::Generate();
  {
    auto db = Database::Open(path_);
    ASSERT_OK(db);
    ASSERT_OK(ApplyMigrations(**db, previous, "test"));
    ASSERT_OK((*db)->Write([&](sql::Connection& c) -> util::Result<void> {
      auto p = Execute(c,
                       "INSERT INTO pipelines (uuid, name, created_at, updated_at) "
                       "VALUES (?, 'old', 1, 1)",
                       pipeline.str());
      if (!p) return tl::make_unexpected(p.error());
      auto b = Execute(c,
                       "INSERT INTO bots (uuid, name, adapter, created_at, updated_at) "
                       "VALUES (?, 'old', 'telegram', 1, 1)",
                       bot.str());
      if (!b) return tl::make_unexpected(b.error());
      return util::Ok();
    }));
    auto has_table = (*db)->Read([](sql::Connection& c) {
      return Exists(c, "SELECT 1 FROM sqlite_master WHERE name = 'conversations'");
    });
    ASSERT_OK(has_table);
    EXPECT_FALSE(*has_table);
  }

  Open();  // upgrades, as the server does
  const domain::ConversationKey key{pipeline, bot, "group_7"};
  ASSERT_OK(storage_->conversations().Append(key, Round("a"), 5));
  EXPECT_EQ(storage_->bots().Get(bot)->name, "old");
  Reopen();
  EXPECT_EQ(storage_->conversations().Load(key, 5)->size(), 2u);
  storage_.reset();

  auto db = Database::Open(path_);
  ASSERT_OK(db);
  auto again = ApplyMigrations(**db, SchemaMigrations(), "test");
  ASSERT_OK(again);
  EXPECT_EQ(*again, 0);
  auto versions = (*db)->Read([](sql::Connection& c) {
    return QueryInt(c, "SELECT COUNT(*) FROM schema_migrations WHERE version = 2");
  });
  ASSERT_OK(versions);
  EXPECT_EQ(*versions, 1);
  auto total = (*db)->Read(
      [](sql::Connection& c) { return QueryInt(c, "SELECT COUNT(*) FROM schema_migrations"); });
  ASSERT_OK(total);
  EXPECT_EQ(*total, static_cast<std::int64_t>(SchemaMigrations().size()));
}

TEST_F(StorageTest, PluginsAreKeptWithTheirConfigAndStorageUntilRemoved) {
  auto& plugins = storage_->plugins();
  domain::InstalledPlugin p;
  p.author = "alice";
  p.name = "echo";
  p.version = "1.0.0";
  p.install_source = "marketplace";
  p.config = {{"greeting", "hi"}};
  p.manifest = {{"label", util::JsonObject{{"en_US", "Echo"}}}};
  p.created_at = At(1000);
  p.updated_at = At(1000);
  ASSERT_TRUE(plugins.Put(p));
  domain::InstalledPlugin q = p;
  q.name = "zeta";
  q.priority = 5;
  ASSERT_TRUE(plugins.Put(q));
  auto list = plugins.List();
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "zeta");  // higher priority first

  EXPECT_FALSE(plugins.Get(p.key())->allow_network);  // no network unless the admin says so
  p.version = "2.0.0";
  p.enabled = false;
  p.allow_network = true;
  p.updated_at = At(2000);
  p.created_at = At(9999);  // ignored on replace
  ASSERT_TRUE(plugins.Put(p));
  ASSERT_TRUE(plugins.StorageSet(p.key(), "count", "3"));
  Reopen();
  auto got = storage_->plugins().Get(p.key());
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->version, "2.0.0");
  EXPECT_FALSE(got->enabled);
  EXPECT_TRUE(got->allow_network);
  EXPECT_EQ(got->config.at("greeting").as_string(), "hi");
  EXPECT_EQ(got->manifest.at("label").at("en_US").as_string(), "Echo");
  EXPECT_EQ(got->created_at, At(1000));
  EXPECT_EQ(got->updated_at, At(2000));
  EXPECT_EQ(*storage_->plugins().StorageGet(p.key(), "count"), std::optional<std::string>("3"));
  EXPECT_EQ(*storage_->plugins().StorageGet(p.key(), "none"), std::nullopt);

  ASSERT_TRUE(storage_->plugins().Remove(p.key()));
  EXPECT_EQ(storage_->plugins().Get(p.key()).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(storage_->plugins().Remove(p.key()).error().code, ErrorCode::kNotFound);
  auto orphan = storage_->plugins().StorageSet(p.key(), "count", "4");
  ASSERT_FALSE(orphan);
  EXPECT_EQ(orphan.error().code, ErrorCode::kNotFound);
  // Its storage went with it: a reinstall starts empty.
  ASSERT_TRUE(storage_->plugins().Put(p));
  EXPECT_EQ(*storage_->plugins().StorageGet(p.key(), "count"), std::nullopt);
}

}  // namespace
}  // namespace sb::storage::sqlite
