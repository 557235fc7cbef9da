#include "storage/sql/bot_lease_repository.hpp"

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

// An insert for a free bot, or a takeover of a lapsed lease (or of one this owner holds).
#define SB_ACQUIRE(now)                                                          \
  "INSERT INTO bot_leases (bot_uuid, owner, owner_url, generation, expires_at) " \
  "VALUES (?1, ?2, ?3, 1, " now                                                  \
  " + ?4) ON CONFLICT (bot_uuid) DO UPDATE SET "                                 \
  "owner = excluded.owner, owner_url = excluded.owner_url, "                     \
  "generation = bot_leases.generation + 1, expires_at = excluded.expires_at "    \
  "WHERE bot_leases.expires_at < " now                                           \
  " OR bot_leases.owner = excluded.owner "                                       \
  "RETURNING generation"
#define SB_RENEW(now)                                                                       \
  "UPDATE bot_leases SET expires_at = " now " + ?2 WHERE owner = ?1 AND expires_at >= " now \
  " RETURNING bot_uuid, owner, owner_url, generation"
#define SB_HOLDER(now)                                                   \
  "SELECT bot_uuid, owner, owner_url, generation FROM bot_leases WHERE " \
  "bot_uuid = ? AND expires_at >= " now

domain::BotLease ReadLease(const Statement& s) {
  return {util::BotId::FromTrusted(s.Text(0)), s.Text(1), s.Text(2), s.Int64(3)};
}

}  // namespace

util::Result<std::optional<std::int64_t>> SqlBotLeaseRepository::Acquire(
    const util::BotId& bot, const std::string& owner, const std::string& owner_url,
    std::chrono::milliseconds ttl) {
  return db_.Write([&](Connection& c) -> util::Result<std::optional<std::int64_t>> {
    auto stmt = Query(
        c, c.dialect() == Dialect::kSqlite ? SB_ACQUIRE(SB_SQLITE_NOW) : SB_ACQUIRE(SB_PG_NOW),
        bot.str(), owner, owner_url, static_cast<std::int64_t>(ttl.count()));
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return std::optional<std::int64_t>();
    const std::int64_t generation = stmt->Int64(0);
    if (auto rest = stmt->Run(); !rest) return tl::make_unexpected(rest.error());
    return std::optional<std::int64_t>(generation);
  });
}

util::Result<std::vector<domain::BotLease>> SqlBotLeaseRepository::Renew(
    const std::string& owner, std::chrono::milliseconds ttl) {
  return db_.Write([&](Connection& c) -> util::Result<std::vector<domain::BotLease>> {
    auto stmt =
        Query(c, c.dialect() == Dialect::kSqlite ? SB_RENEW(SB_SQLITE_NOW) : SB_RENEW(SB_PG_NOW),
              owner, static_cast<std::int64_t>(ttl.count()));
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::BotLease>(
        *stmt, [](const Statement& s) -> util::Result<domain::BotLease> { return ReadLease(s); });
  });
}

util::Result<void> SqlBotLeaseRepository::Release(const util::BotId& bot,
                                                  const std::string& owner) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto r =
        Execute(c, "DELETE FROM bot_leases WHERE bot_uuid = ? AND owner = ?", bot.str(), owner);
    if (!r) return tl::make_unexpected(r.error());
    return util::Ok();
  });
}

util::Result<std::optional<domain::BotLease>> SqlBotLeaseRepository::Holder(
    const util::BotId& bot) {
  return db_.Read([&](Connection& c) -> util::Result<std::optional<domain::BotLease>> {
    auto stmt =
        Query(c, c.dialect() == Dialect::kSqlite ? SB_HOLDER(SB_SQLITE_NOW) : SB_HOLDER(SB_PG_NOW),
              bot.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return std::optional<domain::BotLease>();
    return std::optional<domain::BotLease>(ReadLease(*stmt));
  });
}

}  // namespace sb::storage::sql
