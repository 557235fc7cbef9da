// Rules for model providers: the requester must be in the catalogue, the base URL must be an
// http(s) URL, and a provider still used by models cannot be deleted.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "domain/catalogue.hpp"
#include "domain/change_feed.hpp"
#include "domain/provider.hpp"
#include "util/clock.hpp"

namespace sb::services {

struct ProviderDraft {
  std::string name;
  std::string requester;
  std::string base_url;
  std::vector<std::string> api_keys;
};

struct ProviderPatch {
  std::optional<std::string> name;
  std::optional<std::string> requester;
  std::optional<std::string> base_url;
  std::optional<std::vector<std::string>> api_keys;
};

// Thread-safe; blocking (call from the blocking pool).
class ProviderService {
 public:
  ProviderService(domain::ProviderRepository& repo, const domain::Catalogue& requesters,
                  const util::Clock& clock);

  util::Result<std::vector<domain::ProviderUsage>> List();
  // kNotFound naming the uuid.
  util::Result<domain::ProviderUsage> Get(const util::ProviderId& id);
  // kInvalidArgument naming the field at fault.
  util::Result<util::ProviderId> Create(const ProviderDraft& draft);
  // A checked new provider, not yet stored (for a model that brings its own provider).
  util::Result<domain::Provider> Prepare(const ProviderDraft& draft) const;
  util::Result<void> Update(const util::ProviderId& id, const ProviderPatch& patch);
  // kInvalidArgument (the seed's 400) naming the counts when models still reference it.
  util::Result<void> Delete(const util::ProviderId& id);

  // Grows after every committed change to providers or to the model counts, so renderings of
  // List() can be cached (see http/api/rendered_cache.hpp) and model routes remembered
  // (model_resolver.hpp). Changes made through other instances move it by ChangedElsewhere.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // Called by ModelService after a model is added, moved or removed (the counts change).
  void NoteModelsChanged() { Changed(); }
  // Where committed changes are announced to other instances (optional; set before serving).
  void SetChangeFeed(domain::ChangeFeed* feed) { feed_ = feed; }
  // A provider or model changed through another instance: what was cached is stale.
  void ChangedElsewhere() { generation_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  void Changed() {
    generation_.fetch_add(1, std::memory_order_acq_rel);
    if (feed_ != nullptr) feed_->Publish(domain::ChangeKind::kProviders, "");
  }
  util::Result<void> Check(const domain::Provider& p) const;

  domain::ProviderRepository& repo_;
  const domain::Catalogue& requesters_;
  const util::Clock& clock_;
  std::atomic<std::uint64_t> generation_{1};
  domain::ChangeFeed* feed_ = nullptr;
};

// http:// or https:// with a host; the scheme in any case ("HTTPS://x" too, RFC 3986 §3.1).
bool IsHttpUrl(std::string_view url);
// ws:// or wss:// with a host, the same way.
bool IsWebSocketUrl(std::string_view url);

}  // namespace sb::services
