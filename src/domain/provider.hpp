// A model provider (an API endpoint plus keys) and where providers are kept.
#pragma once

#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"

namespace sb::domain {

struct Provider {
  util::ProviderId uuid;
  std::string name;
  std::string requester;  // a name of the requester catalogue
  std::string base_url;
  std::vector<std::string> api_keys;
  util::TimePoint created_at;
  util::TimePoint updated_at;
};

// A provider with the number of models that reference it.
struct ProviderUsage {
  Provider provider;
  int llm_count = 0;
  int embedding_count = 0;
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class ProviderRepository {
 public:
  virtual ~ProviderRepository() = default;
  // Oldest first.
  virtual util::Result<std::vector<ProviderUsage>> List() = 0;
  // kNotFound when absent.
  virtual util::Result<ProviderUsage> Get(const util::ProviderId& id) = 0;
  virtual util::Result<void> Insert(const Provider& provider) = 0;
  // Replaces every field but uuid and created_at. kNotFound when absent.
  virtual util::Result<void> Update(const Provider& provider) = 0;
  // kNotFound when absent; kConflict when a model still references it (checked atomically).
  virtual util::Result<void> Delete(const util::ProviderId& id) = 0;
};

}  // namespace sb::domain
