#include "storage/sql/settings_repository.hpp"

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

util::Result<std::optional<std::string>> SqlSettingsRepository::Get(const std::string& key) {
  return db_.Read([&](Connection& c) -> util::Result<std::optional<std::string>> {
    auto stmt = Query(c, "SELECT value FROM settings WHERE key = ?", key);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return std::optional<std::string>();
    return std::optional<std::string>(stmt->Text(0));
  });
}

util::Result<void> SqlSettingsRepository::Set(const std::string& key, const std::string& value) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto r = Execute(c,
                     "INSERT INTO settings (key, value) VALUES (?, ?) "
                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                     key, value);
    if (!r) return tl::make_unexpected(r.error());
    return util::Ok();
  });
}

util::Result<domain::SettingsRepository::Stored> SqlSettingsRepository::GetOrCreate(
    const std::string& key, const std::string& value) {
  return db_.Write([&](Connection& c) -> util::Result<Stored> {
    auto inserted =
        Execute(c, "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                key, value);
    if (!inserted) return tl::make_unexpected(inserted.error());
    if (*inserted == 1) return Stored{value, true};
    auto stmt = Query(c, "SELECT value FROM settings WHERE key = ?", key);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return util::Fail(util::ErrorCode::kInternal, "setting vanished while read");
    return Stored{stmt->Text(0), false};
  });
}

}  // namespace sb::storage::sql
