// LLM and embedding models. Both kinds share one shape (embedding models add `dimensions`), so
// one entity and one repository serve both, keyed by ModelKind.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/provider.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace sb::domain {

enum class ModelKind { kLlm, kEmbedding };

const char* ModelKindName(ModelKind kind);  // "LLM model" / "embedding model", for messages

struct Model {
  ModelKind kind = ModelKind::kLlm;
  util::ModelId uuid;
  std::string name;
  std::string description;
  util::ProviderId provider_uuid;
  util::JsonObject requester_config;   // {model, args}
  std::vector<std::string> abilities;  // chat, vision, func_call (LLM only)
  util::JsonObject extra_args;
  int prefered_ranking = 0;       // LangBot's spelling, kept for client compatibility
  std::optional<int> dimensions;  // embedding models, once learned
  util::TimePoint created_at;
  util::TimePoint updated_at;
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class ModelRepository {
 public:
  virtual ~ModelRepository() = default;
  // Oldest first; only models of `provider` when given.
  virtual util::Result<std::vector<Model>> List(
      ModelKind kind, const std::optional<util::ProviderId>& provider) = 0;
  // kNotFound when absent.
  virtual util::Result<Model> Get(ModelKind kind, const util::ModelId& id) = 0;
  // kInvalidArgument when the provider does not exist (checked atomically).
  virtual util::Result<void> Insert(const Model& model) = 0;
  // Stores a new provider and a model that uses it: both or neither.
  virtual util::Result<void> InsertWithProvider(const Provider& provider, const Model& model) = 0;
  // Replaces every field but uuid, kind and created_at. kNotFound / kInvalidArgument as above.
  virtual util::Result<void> Update(const Model& model) = 0;
  // kNotFound when absent.
  virtual util::Result<void> Delete(ModelKind kind, const util::ModelId& id) = 0;
  // Records what an embedding model's vectors measure, touching nothing else (a test may finish
  // while someone edits the model). kNotFound when absent.
  virtual util::Result<void> SetDimensions(const util::ModelId& id, int dimensions) = 0;
};

}  // namespace sb::domain
