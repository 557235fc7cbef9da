// McpServerRepository over SQL (SQLite or PostgreSQL). extra_args (env values, headers) is sealed
// at rest like provider keys.
#pragma once

#include "domain/mcp.hpp"
#include "storage/sql/database.hpp"
#include "util/secret_box.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`. `db` and `secrets` must outlive this.
class SqlMcpServerRepository final : public domain::McpServerRepository {
 public:
  SqlMcpServerRepository(Database& db, const util::SecretBox& secrets)
      : db_(db), secrets_(secrets) {}

  util::Result<std::vector<domain::McpServer>> List() override;
  util::Result<domain::McpServer> FindByName(const std::string& name) override;
  util::Result<void> Insert(const domain::McpServer& server) override;
  util::Result<void> Update(const domain::McpServer& server) override;
  util::Result<void> Delete(const std::string& uuid) override;

 private:
  Database& db_;
  const util::SecretBox& secrets_;
};

}  // namespace sb::storage::sql
