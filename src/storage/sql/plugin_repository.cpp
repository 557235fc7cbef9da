#include "storage/sql/plugin_repository.hpp"

#include <fmt/format.h>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {
namespace {

using util::ErrorCode;

#define SB_PLUGIN_COLUMNS                                                                    \
  "author, name, version, enabled, priority, install_source, config, manifest, created_at, " \
  "updated_at, allow_network"

util::Result<domain::InstalledPlugin> ReadRow(const Statement& s) {
  domain::InstalledPlugin p;
  p.author = s.Text(0);
  p.name = s.Text(1);
  p.version = s.Text(2);
  p.enabled = s.Int64(3) != 0;
  p.priority = static_cast<int>(s.Int64(4));
  p.install_source = s.Text(5);
  auto config = ObjectFromText(s.Text(6), "plugin config");
  if (!config) return tl::make_unexpected(config.error());
  p.config = std::move(*config);
  auto manifest = ObjectFromText(s.Text(7), "plugin manifest");
  if (!manifest) return tl::make_unexpected(manifest.error());
  p.manifest = std::move(*manifest);
  p.created_at = TimeAt(s.Int64(8));
  p.updated_at = TimeAt(s.Int64(9));
  p.allow_network = s.Int64(10) != 0;
  return p;
}

util::Error NotFound(const domain::PluginKey& key) {
  return {ErrorCode::kNotFound, fmt::format("plugin {} is not installed", key.id())};
}

}  // namespace

util::Result<std::vector<domain::InstalledPlugin>> SqlPluginRepository::List() {
  return db_.Read([&](Connection& c) -> util::Result<std::vector<domain::InstalledPlugin>> {
    auto stmt =
        Query(c, "SELECT " SB_PLUGIN_COLUMNS " FROM plugins ORDER BY priority DESC, author, name");
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::InstalledPlugin>(*stmt, ReadRow);
  });
}

util::Result<domain::InstalledPlugin> SqlPluginRepository::Get(const domain::PluginKey& key) {
  return db_.Read([&](Connection& c) -> util::Result<domain::InstalledPlugin> {
    auto stmt = Query(c, "SELECT " SB_PLUGIN_COLUMNS " FROM plugins WHERE author = ? AND name = ?",
                      key.author, key.name);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(NotFound(key));
    return ReadRow(*stmt);
  });
}

util::Result<void> SqlPluginRepository::Put(const domain::InstalledPlugin& p) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto r = Execute(c,
                     "INSERT INTO plugins (" SB_PLUGIN_COLUMNS
                     ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                     "ON CONFLICT (author, name) DO UPDATE SET version = excluded.version, "
                     "enabled = excluded.enabled, priority = excluded.priority, "
                     "install_source = excluded.install_source, config = excluded.config, "
                     "manifest = excluded.manifest, updated_at = excluded.updated_at, "
                     "allow_network = excluded.allow_network",
                     p.author, p.name, p.version, p.enabled ? 1 : 0, p.priority, p.install_source,
                     JsonToText(p.config), JsonToText(p.manifest), Millis(p.created_at),
                     Millis(p.updated_at), p.allow_network ? 1 : 0);
    if (!r) return tl::make_unexpected(r.error());
    return util::Ok();
  });
}

util::Result<void> SqlPluginRepository::Remove(const domain::PluginKey& key) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto r = Execute(c, "DELETE FROM plugins WHERE author = ? AND name = ?", key.author, key.name);
    if (!r) return tl::make_unexpected(r.error());
    if (*r == 0) return tl::make_unexpected(NotFound(key));
    return util::Ok();
  });
}

util::Result<std::optional<std::string>> SqlPluginRepository::StorageGet(
    const domain::PluginKey& key, const std::string& item) {
  return db_.Read([&](Connection& c) -> util::Result<std::optional<std::string>> {
    auto stmt =
        Query(c, "SELECT value FROM plugin_storage WHERE author = ? AND name = ? AND item = ?",
              key.author, key.name, item);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return std::optional<std::string>();
    return std::optional<std::string>(stmt->Text(0));
  });
}

util::Result<void> SqlPluginRepository::StorageSet(const domain::PluginKey& key,
                                                   const std::string& item,
                                                   const std::string& value) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto installed =
        Exists(c, "SELECT 1 FROM plugins WHERE author = ? AND name = ?", key.author, key.name);
    if (!installed) return tl::make_unexpected(installed.error());
    if (!*installed) return tl::make_unexpected(NotFound(key));
    auto r = Execute(c,
                     "INSERT INTO plugin_storage (author, name, item, value) VALUES (?, ?, ?, ?) "
                     "ON CONFLICT (author, name, item) DO UPDATE SET value = excluded.value",
                     key.author, key.name, item, value);
    if (!r) return tl::make_unexpected(r.error());
    return util::Ok();
  });
}

}  // namespace sb::storage::sql
