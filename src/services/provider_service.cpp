#include "services/provider_service.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <optional>

#include "services/config_schema.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;
using util::Fail;

util::Error NotFound(const util::ProviderId& id) {
  return {ErrorCode::kNotFound, fmt::format("provider {} does not exist", id.str())};
}

}  // namespace

namespace {

// `<scheme>://<host>...` with one of `schemes` (lower case), compared case-insensitively as
// RFC 3986 §3.1 asks, and no spaces or control characters anywhere.
bool HasSchemeAndHost(std::string_view url, std::initializer_list<std::string_view> schemes) {
  const auto colon = url.find("://");
  if (colon == std::string_view::npos) return false;
  const auto scheme = url.substr(0, colon);
  bool known = false;
  for (auto s : schemes) {
    known = known || (scheme.size() == s.size() &&
                      std::equal(scheme.begin(), scheme.end(), s.begin(), [](char a, char b) {
                        return std::tolower(static_cast<unsigned char>(a)) == b;
                      }));
  }
  if (!known) return false;
  const auto rest = url.substr(colon + 3);
  if (rest.empty() || rest.front() == '/' || rest.front() == ':') return false;
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  }
  return true;
}

}  // namespace

bool IsHttpUrl(std::string_view url) { return HasSchemeAndHost(url, {"http", "https"}); }

bool IsWebSocketUrl(std::string_view url) { return HasSchemeAndHost(url, {"ws", "wss"}); }

ProviderService::ProviderService(domain::ProviderRepository& repo,
                                 const domain::Catalogue& requesters, const util::Clock& clock)
    : repo_(repo), requesters_(requesters), clock_(clock) {}

util::Result<void> ProviderService::Check(const domain::Provider& p) const {
  if (p.name.empty() || p.name.size() > 255) {
    return Fail(ErrorCode::kInvalidArgument,
                "name must be a non-empty string of at most 255 bytes");
  }
  if (!requesters_.Find(p.requester)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("requester '{}' is not a known requester (see "
                            "GET /api/v1/provider/requesters)",
                            p.requester.substr(0, 64)));
  }
  if (!IsHttpUrl(p.base_url)) {
    return Fail(ErrorCode::kInvalidArgument, "base_url must be an http:// or https:// URL");
  }
  for (const auto& key : p.api_keys) {
    if (key.size() > 4096) {
      return Fail(ErrorCode::kInvalidArgument, "api_keys holds a key longer than 4096 bytes");
    }
  }
  return util::Ok();
}

util::Result<std::vector<domain::ProviderUsage>> ProviderService::List() { return repo_.List(); }

util::Result<domain::ProviderUsage> ProviderService::Get(const util::ProviderId& id) {
  auto r = repo_.Get(id);
  if (!r && r.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
  return r;
}

util::Result<util::ProviderId> ProviderService::Create(const ProviderDraft& draft) {
  auto p = Prepare(draft);
  if (!p) return tl::unexpected(p.error());
  if (auto r = repo_.Insert(*p); !r) return tl::unexpected(r.error());
  Changed();
  return p->uuid;
}

util::Result<domain::Provider> ProviderService::Prepare(const ProviderDraft& draft) const {
  domain::Provider p;
  p.uuid = util::ProviderId::Generate();
  p.name = draft.name;
  p.requester = draft.requester;
  p.base_url = draft.base_url;
  p.api_keys = draft.api_keys;
  p.created_at = p.updated_at = clock_.Now();
  if (auto ok = Check(p); !ok) return tl::unexpected(ok.error());
  return p;
}

namespace {

// A PUT may send back the masks of the keys it keeps (the console only ever sees masks): each mask
// stands for the stored key it masks, the one at the same position first, else the first stored
// key with that mask not already taken. Anything else is a new key. Keys shorter than 12
// characters all mask as "****", so among several of those a mask keeps them in stored order.
std::vector<std::string> KeepMaskedKeys(const std::vector<std::string>& incoming,
                                        const std::vector<std::string>& stored) {
  std::vector<bool> taken(stored.size(), false);
  std::vector<std::string> out;
  out.reserve(incoming.size());
  for (std::size_t i = 0; i < incoming.size(); ++i) {
    const std::string& key = incoming[i];
    std::optional<std::size_t> match;
    if (i < stored.size() && !taken[i] && MaskSecret(stored[i]) == key) match = i;
    for (std::size_t j = 0; !match && j < stored.size(); ++j) {
      if (!taken[j] && MaskSecret(stored[j]) == key) match = j;
    }
    if (match) {
      taken[*match] = true;
      out.push_back(stored[*match]);
    } else {
      out.push_back(key);
    }
  }
  return out;
}

}  // namespace

util::Result<void> ProviderService::Update(const util::ProviderId& id, const ProviderPatch& patch) {
  auto current = Get(id);
  if (!current) return tl::unexpected(current.error());
  domain::Provider p = current->provider;
  if (patch.name) p.name = *patch.name;
  if (patch.requester) p.requester = *patch.requester;
  if (patch.base_url) p.base_url = *patch.base_url;
  if (patch.api_keys) p.api_keys = KeepMaskedKeys(*patch.api_keys, p.api_keys);
  p.updated_at = clock_.Now();
  if (auto ok = Check(p); !ok) return ok;
  auto r = repo_.Update(p);
  Changed();
  if (!r && r.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
  return r;
}

util::Result<void> ProviderService::Delete(const util::ProviderId& id) {
  // The repository checks references and deletes in one transaction; the counts for the message
  // are read only when it refuses.
  auto r = repo_.Delete(id);
  if (r) {
    Changed();
    return r;
  }
  if (r.error().code == ErrorCode::kNotFound) return tl::unexpected(NotFound(id));
  if (r.error().code != ErrorCode::kConflict) return r;
  auto usage = repo_.Get(id);
  const int llm = usage ? usage->llm_count : 0;
  const int embedding = usage ? usage->embedding_count : 0;
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("provider {} is still used by {} LLM model(s) and {} embedding "
                          "model(s); delete or move them first",
                          id.str(), llm, embedding));
}

}  // namespace sb::services
