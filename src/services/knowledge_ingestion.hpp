// Ingestion of uploaded files into knowledge bases, one file at a time on a thread of its own (a
// slow embedding provider never holds a thread the API needs): parse, chunk, embed in batches,
// then store every chunk and mark the file completed in one transaction. Each file has a task
// (`/system/tasks/{id}`) with its progress; a file that fails is marked failed with a reason a
// person can act on and never touches the others. A file still pending or processing when its
// instance died is taken up again through its task (Resume, once the task is claimed).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "domain/knowledge.hpp"
#include "knowledge/document_text.hpp"
#include "services/file_store.hpp"
#include "services/knowledge_embedder.hpp"
#include "services/knowledge_indexes.hpp"
#include "services/task_service.hpp"

namespace sb::services {

struct IngestionDeps {
  domain::KnowledgeRepository* repo = nullptr;
  TaskService* tasks = nullptr;
  KnowledgeEmbedder* embedder = nullptr;
  KnowledgeIndexes* indexes = nullptr;
  FileStore* documents = nullptr;
  const util::Clock* clock = nullptr;
  knowledge::DocumentLimits limits;
};

class KnowledgeIngestion {
 public:
  explicit KnowledgeIngestion(IngestionDeps deps) : deps_(std::move(deps)) {}
  ~KnowledgeIngestion() { Stop(); }

  // Queues files left unfinished by the last run, then starts the worker.
  util::Result<void> Start();
  // Stops after the current step (an embedding call in flight is cancelled); the file being
  // worked on stays "processing" and is resumed at the next start.
  void Stop();

  void Enqueue(const util::KnowledgeFileId& file);
  // Takes up the file of a knowledge-store-file task claimed from an instance that died (its
  // spec names the file). An error says why it cannot (the task is then failed with it).
  util::Result<void> Resume(const domain::Task& task);
  // Re-embeds every passage of `base` with the model of `creation_settings`, then stores the
  // vectors and the settings together; the base keeps its old model until then. The task id.
  util::Result<std::int64_t> EnqueueReembed(const util::KnowledgeBaseId& base,
                                            util::JsonObject creation_settings);

 private:
  struct Job {
    util::KnowledgeFileId file;  // a file to ingest, or
    util::KnowledgeBaseId base;  // a base to re-embed with `creation_settings`
    util::JsonObject creation_settings;
    std::int64_t task_id = 0;
  };
  void Loop();
  void Reembed(const Job& job);
  void Process(const util::KnowledgeFileId& id);
  util::Result<void> Ingest(domain::KnowledgeFile& file, domain::Task& task);
  void Fail(domain::KnowledgeFile& file, domain::Task& task, const std::string& why);

  IngestionDeps deps_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;  // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::atomic<bool> cancelled_{false};
  std::thread worker_;
};

}  // namespace sb::services
