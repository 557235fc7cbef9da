// Embeddings for knowledge bases, called from blocking threads: the base's embedding model (a
// stored model uuid) is resolved to its provider and called through the LLM gateway, which
// retries connection errors, 429 and 5xx and rotates keys. Texts go in batches.
//   KnowledgeEmbedder embedder(models, gateway, 32);
//   auto vectors = embedder.Embed(model_uuid, texts, [&](std::size_t done) { progress(done); });
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "domain/llm.hpp"
#include "services/model_service.hpp"

namespace sb::services {

class KnowledgeEmbedder {
 public:
  KnowledgeEmbedder(ModelService& models, domain::LlmGateway& gateway, std::size_t batch_size)
      : models_(models), gateway_(gateway), batch_size_(batch_size ? batch_size : 1) {}

  // One vector per text, in order. `progress` (may be null) is told how many are done after
  // each batch; `cancelled` (may be null) stops between batches and cancels the call in flight.
  // Errors say what failed for a person: "the embedding model ... is not found", "the embedding
  // call failed: <provider's reason>", "the provider returned N vectors for M texts".
  util::Result<std::vector<std::vector<float>>> Embed(
      const std::string& model_uuid, const std::vector<std::string>& texts,
      const std::function<void(std::size_t done)>& progress = nullptr,
      const std::atomic<bool>* cancelled = nullptr);

  // Checks that `model_uuid` names a stored embedding model (kInvalidArgument otherwise).
  util::Result<void> CheckModel(const std::string& model_uuid);

 private:
  ModelService& models_;
  domain::LlmGateway& gateway_;
  std::size_t batch_size_;
};

}  // namespace sb::services
