#include "storage/sqlite/sqlite_storage.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "storage/sql/bot_repository.hpp"
#include "storage/sql/provider_repository.hpp"
#include "storage/sql/row_codec.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/sqlite/migrations.hpp"
#include "util/private_files.hpp"

namespace sb::storage::sqlite {
namespace {

using sql::CollectRows;
using sql::Execute;
using sql::Query;

// Rows written before secrets were sealed at rest are sealed now, in one transaction; returns
// how many. Sealed rows are left as they are, so a start after the first costs two scans.
util::Result<int> SealPlaintextRows(Database& db, const util::SecretBox& secrets) {
  using Rows = std::vector<std::pair<std::string, std::string>>;
  return db.Write([&](sql::Connection& c) -> util::Result<int> {
    auto plaintext = [&c](const char* sql) -> util::Result<Rows> {
      auto stmt = Query(c, sql);
      if (!stmt) return tl::make_unexpected(stmt.error());
      return CollectRows<std::pair<std::string, std::string>>(
          *stmt, [](const sql::Statement& s) -> util::Result<std::pair<std::string, std::string>> {
            return std::make_pair(s.Text(0), s.Text(1));
          });
    };
    auto providers =
        plaintext("SELECT uuid, api_keys FROM providers WHERE substr(api_keys, 1, 7) <> 'sbenc1:'");
    if (!providers) return tl::make_unexpected(providers.error());
    auto bots = plaintext(
        "SELECT uuid, adapter_config FROM bots WHERE substr(adapter_config, 1, 7) <> 'sbenc1:'");
    if (!bots) return tl::make_unexpected(bots.error());
    if (providers->empty() && bots->empty()) return 0;
    // The old plain text must not stay behind in the file's free space. Only for this
    // connection, which the caller closes afterwards.
    if (auto r = c.Exec("PRAGMA secure_delete=ON"); !r) return tl::make_unexpected(r.error());
    for (const auto& [uuid, keys] : *providers) {
      auto r =
          Execute(c, "UPDATE providers SET api_keys = ? WHERE uuid = ?",
                  sql::SealProviderKeys(secrets, util::ProviderId::FromTrusted(uuid), keys), uuid);
      if (!r) return tl::make_unexpected(r.error());
    }
    for (const auto& [uuid, config] : *bots) {
      auto r = Execute(c, "UPDATE bots SET adapter_config = ? WHERE uuid = ?",
                       sql::SealBotConfig(secrets, util::BotId::FromTrusted(uuid), config), uuid);
      if (!r) return tl::make_unexpected(r.error());
    }
    return static_cast<int>(providers->size() + bots->size());
  });
}

}  // namespace

util::Result<std::unique_ptr<SqliteStorage>> SqliteStorage::Open(const std::string& path,
                                                                 util::SecretBox secrets) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    if (auto r = util::CreatePrivateDirectories(parent); !r) return tl::make_unexpected(r.error());
  }
  auto db = Database::Open(path);
  if (!db) return tl::make_unexpected(db.error());
  auto migrated = sql::ApplyMigrations(**db, SchemaMigrations(), path);
  if (!migrated) return tl::make_unexpected(migrated.error());
  auto sealed = SealPlaintextRows(**db, secrets);
  if (!sealed) return tl::make_unexpected(sealed.error());
  if (*sealed > 0) {
    // Closing checkpoints the WAL, which held the old pages, into the main file and removes it.
    (*db)->Close();
    db = Database::Open(path);
    if (!db) return tl::make_unexpected(db.error());
  }
  return std::unique_ptr<SqliteStorage>(new SqliteStorage(std::move(*db), std::move(secrets)));
}

}  // namespace sb::storage::sqlite
