// Model tests (contract §3): a real request through the model's provider — a chat with the
// prompt, or an embedding of the text — timed, with failures classified for the person who is
// setting the model up. Embedding models learn and store their dimensions on first success.
//   tests.TestLlm(id, "Hello", [](Result<LlmTestResult> r) { ... });   // done runs once
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "domain/llm.hpp"
#include "domain/model.hpp"
#include "services/model_service.hpp"
#include "services/provider_service.hpp"
#include "util/blocking_executor.hpp"

namespace sb::services {

struct LlmTestResult {
  std::int64_t latency_ms = 0;
  std::string reply;
  domain::Usage usage;
};

struct EmbeddingTestResult {
  std::int64_t latency_ms = 0;
  int dimensions = 0;
};

// An unsaved model described in the request body (path uuid `_`).
struct ModelUnderTest {
  std::string name;
  std::optional<util::ProviderId> provider_uuid;
  std::optional<ProviderDraft> inline_provider;
  util::JsonObject requester_config;
  util::JsonObject extra_args;
};

// Thread-safe. Call from the blocking pool (it reads the database before calling out); `done`
// runs exactly once, on any thread, and must not block.
class ModelTestService {
 public:
  ModelTestService(ModelService& models, ProviderService& providers, domain::ModelRepository& repo,
                   domain::LlmGateway& gateway, util::BlockingExecutor& blocking);

  void TestLlm(const util::ModelId& id, std::string prompt,
               std::function<void(util::Result<LlmTestResult>)> done);
  void TestLlmDraft(const ModelUnderTest& model, std::string prompt,
                    std::function<void(util::Result<LlmTestResult>)> done);
  void TestEmbedding(const util::ModelId& id, std::string text,
                     std::function<void(util::Result<EmbeddingTestResult>)> done);
  void TestEmbeddingDraft(const ModelUnderTest& model, std::string text,
                          std::function<void(util::Result<EmbeddingTestResult>)> done);

 private:
  util::Result<domain::ProviderEndpoint> EndpointForDraft(const ModelUnderTest& model);
  void RunChat(domain::ProviderEndpoint endpoint, std::string model_id, util::JsonObject extra_args,
               std::string prompt, std::function<void(util::Result<LlmTestResult>)> done);
  void RunEmbedding(domain::ProviderEndpoint endpoint, std::string model_id,
                    util::JsonObject extra_args, std::string text,
                    std::optional<domain::Model> to_update,
                    std::function<void(util::Result<EmbeddingTestResult>)> done);

  ModelService& models_;
  ProviderService& providers_;
  domain::ModelRepository& repo_;
  domain::LlmGateway& gateway_;
  util::BlockingExecutor& blocking_;
};

// "the provider refused the API key: provider answered 401: ..." — the kind first, for people.
util::Error DescribeProviderFailure(const util::Error& error);

}  // namespace sb::services
