#include "storage/sql/webhook_repository.hpp"

#include <fmt/format.h>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {
namespace {

using util::ErrorCode;

#define SB_WEBHOOK_COLUMNS                                                             \
  "id, name, url, description, enabled, secret, created_at, updated_at, last_status, " \
  "last_http_status, last_error, last_delivery_at, deliveries, failures"

std::string SecretContext(std::int64_t id) { return fmt::format("webhooks.secret.{}", id); }

util::Result<domain::Webhook> ReadRow(const Statement& s, const util::SecretBox& secrets) {
  domain::Webhook w;
  w.id = s.Int64(0);
  w.name = s.Text(1);
  w.url = s.Text(2);
  w.description = s.Text(3);
  w.enabled = s.Int64(4) != 0;
  auto secret = secrets.Open(s.Text(5), SecretContext(w.id));
  if (!secret) return tl::make_unexpected(secret.error());
  w.secret = std::move(*secret);
  w.created_at = TimeAt(s.Int64(6));
  w.updated_at = TimeAt(s.Int64(7));
  w.last.status = s.Text(8);
  w.last.http_status = static_cast<int>(s.Int64(9));
  w.last.error = s.Text(10);
  if (!s.IsNull(11)) w.last.at = TimeAt(s.Int64(11));
  w.last.deliveries = s.Int64(12);
  w.last.failures = s.Int64(13);
  return w;
}

util::Error NotFound(std::int64_t id) {
  return util::Error{ErrorCode::kNotFound, fmt::format("webhook {} not found", id)};
}

}  // namespace

util::Result<std::vector<domain::Webhook>> SqlWebhookRepository::List() {
  return db_.Read([&](Connection& c) -> util::Result<std::vector<domain::Webhook>> {
    auto stmt = Query(c, "SELECT " SB_WEBHOOK_COLUMNS " FROM webhooks ORDER BY id");
    if (!stmt) return tl::make_unexpected(stmt.error());
    return CollectRows<domain::Webhook>(
        *stmt, [this](const Statement& row) { return ReadRow(row, secrets_); });
  });
}

util::Result<domain::Webhook> SqlWebhookRepository::Get(std::int64_t id) {
  return db_.Read([&](Connection& c) -> util::Result<domain::Webhook> {
    auto stmt = Query(c, "SELECT " SB_WEBHOOK_COLUMNS " FROM webhooks WHERE id = ?", id);
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(NotFound(id));
    return ReadRow(*stmt, secrets_);
  });
}

util::Result<std::int64_t> SqlWebhookRepository::Insert(const domain::Webhook& w) {
  return db_.Write([&](Connection& c) -> util::Result<std::int64_t> {
    auto inserted = QueryInt(c,
                             "INSERT INTO webhooks (name, url, description, enabled, secret, "
                             "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                             w.name, w.url, w.description, w.enabled ? 1 : 0, std::string(),
                             Millis(w.created_at), Millis(w.updated_at));
    if (!inserted) return tl::make_unexpected(inserted.error());
    // The sealed secret names its row, which exists only now: same transaction.
    const std::int64_t id = *inserted;
    auto sealed = Execute(c, "UPDATE webhooks SET secret = ? WHERE id = ?",
                          secrets_.Seal(w.secret, SecretContext(id)), id);
    if (!sealed) return tl::make_unexpected(sealed.error());
    return id;
  });
}

util::Result<void> SqlWebhookRepository::Update(const domain::Webhook& w) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed =
        Execute(c,
                "UPDATE webhooks SET name = ?, url = ?, description = ?, enabled = ?, "
                "secret = ?, updated_at = ? WHERE id = ?",
                w.name, w.url, w.description, w.enabled ? 1 : 0,
                secrets_.Seal(w.secret, SecretContext(w.id)), Millis(w.updated_at), w.id);
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return tl::make_unexpected(NotFound(w.id));
    return util::Ok();
  });
}

util::Result<void> SqlWebhookRepository::Delete(std::int64_t id) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed = Execute(c, "DELETE FROM webhooks WHERE id = ?", id);
    if (!changed) return tl::make_unexpected(changed.error());
    if (*changed == 0) return tl::make_unexpected(NotFound(id));
    return util::Ok();
  });
}

util::Result<void> SqlWebhookRepository::RecordDelivery(std::int64_t id, bool ok, int http_status,
                                                        const std::string& error,
                                                        util::TimePoint at) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto changed =
        Execute(c,
                "UPDATE webhooks SET last_status = ?, last_http_status = ?, "
                "last_error = ?, last_delivery_at = ?, deliveries = deliveries + ?, "
                "failures = failures + ? WHERE id = ?",
                ok ? "ok" : "failed", http_status, error, Millis(at), ok ? 1 : 0, ok ? 0 : 1, id);
    if (!changed) return tl::make_unexpected(changed.error());
    return util::Ok();
  });
}

}  // namespace sb::storage::sql
