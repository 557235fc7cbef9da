#include "storage/sql/mcp_server_repository.hpp"

#include <fmt/format.h>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using util::ErrorCode;

constexpr const char* kSelect =
    "SELECT uuid, name, enable, mode, extra_args, created_at, updated_at FROM mcp_servers";

std::string ArgsContext(const std::string& uuid) { return "mcp_servers.extra_args:" + uuid; }

util::Result<domain::McpServer> ReadRow(const Statement& s, const util::SecretBox& secrets) {
  domain::McpServer m;
  m.uuid = s.Text(0);
  m.name = s.Text(1);
  m.enable = s.Int(2) != 0;
  m.mode = s.Text(3);
  auto text = secrets.Open(s.Text(4), ArgsContext(m.uuid));
  if (!text) return tl::make_unexpected(text.error());
  auto json = util::ParseJson(*text);
  if (!json || !json->is_object()) {
    return util::Fail(ErrorCode::kInternal,
                      fmt::format("mcp server {}: stored extra_args unreadable", m.name));
  }
  m.extra_args = std::move(json->as_object());
  m.created_at = TimeAt(s.Int64(5));
  m.updated_at = TimeAt(s.Int64(6));
  return m;
}

util::Error NameTaken(const std::string& name) {
  return util::Error{ErrorCode::kConflict,
                     fmt::format("an MCP server named '{}' already exists", name)};
}

}  // namespace

util::Result<std::vector<domain::McpServer>> SqlMcpServerRepository::List() {
  static const std::string kSql = std::string(kSelect) + " ORDER BY created_at, rowid";
  return db_.Read([this](Connection& c) -> util::Result<std::vector<domain::McpServer>> {
    auto stmt = Query(c, kSql);
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::McpServer>(
        *stmt, [this](const Statement& s) { return ReadRow(s, secrets_); });
  });
}

util::Result<domain::McpServer> SqlMcpServerRepository::FindByName(const std::string& name) {
  static const std::string kSql = std::string(kSelect) + " WHERE name = ?";
  return db_.Read([&](Connection& c) -> util::Result<domain::McpServer> {
    auto stmt = Query(c, kSql, name);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) {
      return util::Fail(ErrorCode::kNotFound, "Server not found");
    }
    return ReadRow(*stmt, secrets_);
  });
}

util::Result<void> SqlMcpServerRepository::Insert(const domain::McpServer& m) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto stmt = Query(c,
                      "INSERT INTO mcp_servers (uuid, name, enable, mode, extra_args, created_at, "
                      "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      m.uuid, m.name, m.enable ? 1 : 0, m.mode,
                      secrets_.Seal(util::SerializeJson(m.extra_args), ArgsContext(m.uuid)),
                      Millis(m.created_at), Millis(m.updated_at));
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto r = stmt->Run();
    if (!r && stmt->FailedOnUnique()) return tl::make_unexpected(NameTaken(m.name));
    return r;
  });
}

util::Result<void> SqlMcpServerRepository::Update(const domain::McpServer& m) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto stmt = Query(c,
                      "UPDATE mcp_servers SET name = ?, enable = ?, mode = ?, extra_args = ?, "
                      "updated_at = ? WHERE uuid = ?",
                      m.name, m.enable ? 1 : 0, m.mode,
                      secrets_.Seal(util::SerializeJson(m.extra_args), ArgsContext(m.uuid)),
                      Millis(m.updated_at), m.uuid);
    if (!stmt) return tl::make_unexpected(stmt.error());
    if (auto r = stmt->Run(); !r) {
      if (stmt->FailedOnUnique()) return tl::make_unexpected(NameTaken(m.name));
      return r;
    }
    if (c.Changes() == 0) return util::Fail(ErrorCode::kNotFound, "Server not found");
    return util::Ok();
  });
}

util::Result<void> SqlMcpServerRepository::Delete(const std::string& uuid) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed = Execute(c, "DELETE FROM mcp_servers WHERE uuid = ?", uuid);
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return util::Fail(ErrorCode::kNotFound, "Server not found");
    return util::Ok();
  });
}

}  // namespace sb::storage::sql
