// Outgoing webhooks (LangBot's "API integration" webhooks): every message a running bot receives
// is pushed to each enabled webhook, signed with the webhook's secret, and a receiver may take the
// message over (LangBot's `skip_pipeline`). docs/webhooks.md describes the wire format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::domain {

// How the last push to a webhook went, for the console.
struct WebhookDelivery {
  std::string status;   // "" (never pushed), "ok", "failed"
  int http_status = 0;  // of the last attempt; 0 when it got no answer
  std::string error;    // why the last push failed; empty when it went through
  std::optional<util::TimePoint> at;
  std::int64_t deliveries = 0;  // pushes that went through
  std::int64_t failures = 0;    // pushes that failed after every attempt
};

struct Webhook {
  std::int64_t id = 0;
  std::string name;
  std::string url;  // http(s)
  std::string description;
  bool enabled = true;
  std::string secret;  // signs every push (HMAC-SHA256); generated at creation
  util::TimePoint created_at{};
  util::TimePoint updated_at{};
  WebhookDelivery last;
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class WebhookRepository {
 public:
  virtual ~WebhookRepository() = default;
  // Oldest first.
  virtual util::Result<std::vector<Webhook>> List() = 0;
  // kNotFound when absent.
  virtual util::Result<Webhook> Get(std::int64_t id) = 0;
  // Stores `webhook` (its id ignored) and returns the new id.
  virtual util::Result<std::int64_t> Insert(const Webhook& webhook) = 0;
  // Replaces name, url, description, enabled, secret and updated_at; kNotFound when absent.
  virtual util::Result<void> Update(const Webhook& webhook) = 0;
  // kNotFound when absent.
  virtual util::Result<void> Delete(std::int64_t id) = 0;
  // Records how a push went (counts add up); a webhook deleted meanwhile is ignored.
  virtual util::Result<void> RecordDelivery(std::int64_t id, bool ok, int http_status,
                                            const std::string& error, util::TimePoint at) = 0;
};

}  // namespace sb::domain
