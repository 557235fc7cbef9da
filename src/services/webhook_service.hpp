// The outgoing webhooks as the API manages them (LangBot's /webhooks), and the list the pusher
// reads on every received message, kept in memory so the message path never reads the database.
//   WebhookService hooks(storage.webhooks(), clock);
//   auto created = hooks.Create({.name = "crm", .url = "https://crm.example/hook"});
//   for (const auto& w : hooks.Enabled()) ...   // never blocks
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "domain/change_feed.hpp"
#include "domain/webhook.hpp"
#include "util/clock.hpp"

namespace sb::services {

struct WebhookFields {
  std::optional<std::string> name;
  std::optional<std::string> url;
  std::optional<std::string> description;
  std::optional<bool> enabled;
  bool rotate_secret = false;  // PUT only: a new secret replaces the old one
};

// Thread-safe. Every method but Enabled blocks (call from the blocking pool).
class WebhookService {
 public:
  WebhookService(domain::WebhookRepository& repo, const util::Clock& clock);

  // Reads the webhooks into memory (at start, and when another instance changed them). Errors
  // are the repository's.
  util::Result<void> Load();
  // Where committed changes are announced to other instances (optional; set before serving).
  void SetChangeFeed(domain::ChangeFeed* feed) { feed_ = feed; }

  util::Result<std::vector<domain::Webhook>> List();
  util::Result<domain::Webhook> Get(std::int64_t id);
  // name and url are required (kInvalidArgument naming the field); url must be http(s). A secret
  // is generated. Returns the stored webhook, secret included.
  util::Result<domain::Webhook> Create(const WebhookFields& fields);
  // Changes the fields given; kNotFound, kInvalidArgument as Create.
  util::Result<domain::Webhook> Update(std::int64_t id, const WebhookFields& fields);
  util::Result<void> Delete(std::int64_t id);

  // The enabled webhooks as last stored; never blocks, never reads the database.
  std::shared_ptr<const std::vector<domain::Webhook>> Enabled() const;
  // How a push went (the pusher calls this from the blocking pool).
  void RecordDelivery(std::int64_t id, bool ok, int http_status, const std::string& error);

  // "whsec_" and 32 random hex-like characters.
  static std::string NewSecret();

 private:
  util::Result<void> Refresh();
  // Refresh, then tell the change feed (after a change made here).
  util::Result<void> RefreshAndAnnounce();

  domain::WebhookRepository& repo_;
  const util::Clock& clock_;
  domain::ChangeFeed* feed_ = nullptr;
  // One refresh at a time, so the list read last is the one installed last.
  std::mutex refresh_mu_;
  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<domain::Webhook>> enabled_;  // guarded by mu_
};

// "whsec_…abcd": enough to tell two secrets apart, never enough to use one.
std::string MaskSecret(const std::string& secret);

}  // namespace sb::services
