#include "services/webhook_service.hpp"

#include <utility>

#include "util/crypto.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;
using util::Fail;

constexpr std::size_t kMaxName = 255;
constexpr std::size_t kMaxUrl = 1024;  // LangBot's column sizes
constexpr std::size_t kMaxDescription = 512;

util::Result<void> Check(const domain::Webhook& w) {
  if (w.name.empty()) return Fail(ErrorCode::kInvalidArgument, "name is required");
  if (w.name.size() > kMaxName) return Fail(ErrorCode::kInvalidArgument, "name is too long");
  if (w.url.empty()) return Fail(ErrorCode::kInvalidArgument, "url is required");
  if (w.url.size() > kMaxUrl) return Fail(ErrorCode::kInvalidArgument, "url is too long");
  const bool http = w.url.rfind("http://", 0) == 0 && w.url.size() > 7;
  const bool https = w.url.rfind("https://", 0) == 0 && w.url.size() > 8;
  if (!http && !https) {
    return Fail(ErrorCode::kInvalidArgument, "url must be an http:// or https:// URL");
  }
  for (unsigned char c : w.url) {
    if (c <= 0x20 || c == 0x7f) {
      return Fail(ErrorCode::kInvalidArgument, "url must not contain spaces or control characters");
    }
  }
  if (w.description.size() > kMaxDescription) {
    return Fail(ErrorCode::kInvalidArgument, "description is too long");
  }
  return util::Ok();
}

void Apply(domain::Webhook& w, const WebhookFields& f) {
  if (f.name) w.name = *f.name;
  if (f.url) w.url = *f.url;
  if (f.description) w.description = *f.description;
  if (f.enabled) w.enabled = *f.enabled;
}

}  // namespace

std::string MaskSecret(const std::string& secret) {
  if (secret.size() < 12) return "****";
  return secret.substr(0, 6) + "..." + secret.substr(secret.size() - 4);
}

std::string WebhookService::NewSecret() { return "whsec_" + util::RandomUrlSafe(32); }

WebhookService::WebhookService(domain::WebhookRepository& repo, const util::Clock& clock)
    : repo_(repo),
      clock_(clock),
      enabled_(std::make_shared<const std::vector<domain::Webhook>>()) {}

util::Result<void> WebhookService::Load() { return Refresh(); }

util::Result<void> WebhookService::RefreshAndAnnounce() {
  auto r = Refresh();
  if (feed_ != nullptr) feed_->Publish(domain::ChangeKind::kWebhooks, "");
  return r;
}

util::Result<void> WebhookService::Refresh() {
  std::lock_guard refreshing(refresh_mu_);
  auto all = repo_.List();
  if (!all) return tl::make_unexpected(all.error());
  auto enabled = std::make_shared<std::vector<domain::Webhook>>();
  for (auto& w : *all) {
    if (w.enabled) enabled->push_back(std::move(w));
  }
  std::lock_guard lock(mu_);
  enabled_ = std::move(enabled);
  return util::Ok();
}

util::Result<std::vector<domain::Webhook>> WebhookService::List() { return repo_.List(); }

util::Result<domain::Webhook> WebhookService::Get(std::int64_t id) { return repo_.Get(id); }

util::Result<domain::Webhook> WebhookService::Create(const WebhookFields& fields) {
  domain::Webhook w;
  Apply(w, fields);
  if (auto ok = Check(w); !ok) return tl::make_unexpected(ok.error());
  w.secret = NewSecret();
  w.created_at = w.updated_at = clock_.Now();
  auto id = repo_.Insert(w);
  if (!id) return tl::make_unexpected(id.error());
  if (auto r = RefreshAndAnnounce(); !r) return tl::make_unexpected(r.error());
  return repo_.Get(*id);
}

util::Result<domain::Webhook> WebhookService::Update(std::int64_t id, const WebhookFields& fields) {
  auto w = repo_.Get(id);
  if (!w) return tl::make_unexpected(w.error());
  Apply(*w, fields);
  if (auto ok = Check(*w); !ok) return tl::make_unexpected(ok.error());
  if (fields.rotate_secret) w->secret = NewSecret();
  w->updated_at = clock_.Now();
  if (auto r = repo_.Update(*w); !r) return tl::make_unexpected(r.error());
  if (auto r = RefreshAndAnnounce(); !r) return tl::make_unexpected(r.error());
  return repo_.Get(id);
}

util::Result<void> WebhookService::Delete(std::int64_t id) {
  if (auto r = repo_.Delete(id); !r) return r;
  return RefreshAndAnnounce();
}

std::shared_ptr<const std::vector<domain::Webhook>> WebhookService::Enabled() const {
  std::lock_guard lock(mu_);
  return enabled_;
}

void WebhookService::RecordDelivery(std::int64_t id, bool ok, int http_status,
                                    const std::string& error) {
  // A failure to record is not worth more than the push itself: it is dropped.
  (void)repo_.RecordDelivery(id, ok, http_status, error, clock_.Now());
}

}  // namespace sb::services
