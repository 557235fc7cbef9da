// Knowledge bases as the API and the pipeline use them (LangBot 4.9.5's routes and shapes):
// bases of the built-in engine, documents uploaded and ingested as tasks, retrieval by vector,
// full text or both, and the passages a pipeline's local agent gives its model.
//   auto id = knowledge.CreateBase(body);                 // {"name", "knowledge_engine_plugin_id",
//                                                         //  "creation_settings": {...}}
//   auto key = knowledge.SaveDocument("manual.pdf", bytes);
//   auto task = knowledge.AddFile(*id, *key);             // ingestion runs as a task
//   auto hits = knowledge.Retrieve(*id, "reset the router", {});
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "domain/knowledge.hpp"
#include "domain/llm.hpp"
#include "services/file_store.hpp"
#include "services/knowledge_embedder.hpp"
#include "services/knowledge_engine.hpp"
#include "services/knowledge_indexes.hpp"
#include "services/knowledge_ingestion.hpp"
#include "services/model_service.hpp"
#include "services/task_service.hpp"

namespace sb::services {

struct KnowledgeOptions {
  std::filesystem::path files_dir;  // <data>/files: documents/ and images/ below it
  std::size_t max_upload_bytes = 10 * 1024 * 1024;
  std::size_t embedding_batch_size = 32;
  knowledge::DocumentLimits limits;
};

// One retrieved passage as the API returns it.
struct RetrievalHit {
  domain::Passage passage;
  knowledge::ScoredCandidate score;
};

// Thread-safe; blocking (call from the blocking pool).
class KnowledgeService final : public domain::KnowledgeRetriever {
 public:
  KnowledgeService(domain::KnowledgeRepository& repo, TaskService& tasks, ModelService& models,
                   domain::LlmGateway& gateway, const util::Clock& clock, KnowledgeOptions options);
  ~KnowledgeService() override;

  // Starts ingestion (resuming files a stop interrupted); Stop ends it.
  util::Result<void> Start();
  void Stop();
  // A knowledge-store-file task claimed from an instance that died: its file is ingested here
  // (from this instance's files directory, which must therefore be shared between instances).
  util::Result<void> Resume(const domain::Task& task);

  util::Result<std::vector<domain::KnowledgeBase>> ListBases();
  util::Result<domain::KnowledgeBase> GetBase(std::string_view uuid);
  // LangBot's body: name, description, emoji, knowledge_engine_plugin_id, creation_settings,
  // retrieval_settings. kInvalidArgument naming the field at fault.
  util::Result<util::KnowledgeBaseId> CreateBase(const util::JsonObject& body);
  // name, description, emoji and retrieval_settings; creation_settings may change the chunk
  // sizes (for files added later) and the embedding model only while the base has no file, or
  // with "reembed": true, which re-embeds every passage as a task (its id is returned).
  util::Result<std::optional<std::int64_t>> UpdateBase(std::string_view uuid,
                                                       const util::JsonObject& body);
  util::Result<void> DeleteBase(std::string_view uuid);

  // Uploads (`/files/documents`, `/files/images`): the stored key.
  util::Result<std::string> SaveDocument(std::string_view name, std::string_view bytes);
  util::Result<std::string> SaveImage(std::string_view name, std::string_view bytes);
  // The image's bytes and MIME type; kNotFound for a malformed or unknown key.
  util::Result<std::pair<std::string, std::string>> LoadImage(std::string_view key);
  std::size_t max_upload_bytes() const { return options_.max_upload_bytes; }

  // Adds an uploaded document to a base and queues its ingestion: the task id.
  util::Result<std::int64_t> AddFile(std::string_view base_uuid, std::string_view file_key,
                                     std::string_view parser_id);
  util::Result<std::vector<domain::KnowledgeFile>> ListFiles(std::string_view base_uuid);
  util::Result<void> DeleteFile(std::string_view base_uuid, std::string_view file_uuid);

  // The base's stored retrieval settings with `overrides` on top.
  util::Result<std::vector<RetrievalHit>> Retrieve(std::string_view base_uuid,
                                                   const std::string& query,
                                                   const util::JsonObject& overrides);

  // True while no vector index is being built in the background (benchmarks, tests).
  bool IndexBuildsIdle() const { return indexes_.Idle(); }

  util::Result<std::vector<domain::RetrievedPassage>> RetrieveForMessage(
      const std::vector<std::string>& base_uuids, const std::string& query) override;

 private:
  // The query's vector by embedding model uuid: bases of one model share one embedding call.
  using QueryVectors = std::map<std::string, std::vector<float>>;
  util::Result<std::vector<RetrievalHit>> RetrieveFrom(const domain::KnowledgeBase& base,
                                                       const std::string& query,
                                                       const RetrievalSettings& settings,
                                                       QueryVectors& query_vectors);

  domain::KnowledgeRepository& repo_;
  TaskService& tasks_;
  const util::Clock& clock_;
  KnowledgeOptions options_;
  FileStore documents_;
  FileStore images_;
  KnowledgeEmbedder embedder_;
  KnowledgeIndexes indexes_;
  std::unique_ptr<KnowledgeIngestion> ingestion_;
};

}  // namespace sb::services
