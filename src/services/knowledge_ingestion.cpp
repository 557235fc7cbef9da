#include "services/knowledge_ingestion.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "knowledge/chunker.hpp"
#include "knowledge/retrieval_scoring.hpp"
#include "services/knowledge_engine.hpp"

namespace sb::services {
namespace {

using domain::FileStatus;
using util::ErrorCode;

// The passages of one file, searchable ones with the index of their parent (parent-child).
struct Split {
  std::vector<domain::NewChunk> chunks;
  std::vector<std::size_t> searchable;  // indexes into chunks
};

Split SplitText(const std::string& text, const CreationSettings& settings) {
  Split out;
  if (settings.index_type == IndexType::kChunk) {
    for (auto& c : knowledge::SplitIntoChunks(text, {settings.chunk_size, settings.overlap})) {
      out.searchable.push_back(out.chunks.size());
      out.chunks.push_back({std::move(c.text), {}, {}, std::nullopt});
    }
    return out;
  }
  for (auto& parent : knowledge::SplitParentChild(text, settings.parent_chunk_size,
                                                  settings.child_chunk_size, settings.overlap)) {
    const std::size_t parent_index = out.chunks.size();
    out.chunks.push_back({std::move(parent.parent.text), {}, {}, std::nullopt});
    for (auto& child : parent.children) {
      out.searchable.push_back(out.chunks.size());
      out.chunks.push_back({std::move(child.text), {}, {}, parent_index});
    }
  }
  return out;
}

std::string Unsupported(const std::string& extension) {
  return fmt::format(
      "unsupported file type{}: upload plain text (.txt), Markdown (.md), HTML (.html), PDF or "
      "DOCX",
      extension.empty() ? std::string(" (no extension)") : " ." + extension);
}

}  // namespace

util::Result<void> KnowledgeIngestion::Start() {
  auto unfinished = deps_.repo->ListUnfinishedFiles();
  if (!unfinished) return tl::unexpected(unfinished.error());
  // A file whose task is still pending or running belongs to that task's owner: it is resumed
  // through the task (Resume, called by the claimer once the owner's lease lapsed). Only files
  // whose task ended without them (an older version failed it at start) are taken up here.
  std::size_t queued = 0;
  {
    std::lock_guard lock(mu_);
    for (auto& f : *unfinished) {
      auto task = deps_.tasks->Get(f.task_id);
      if (task && (task->status == domain::TaskStatus::kPending ||
                   task->status == domain::TaskStatus::kRunning)) {
        continue;
      }
      queue_.push_back(Job{f.uuid, {}, {}, 0});
      ++queued;
    }
    stopping_ = false;
  }
  if (queued > 0) spdlog::info("knowledge: resuming the ingestion of {} file(s)", queued);
  cancelled_ = false;
  worker_ = std::thread([this] { Loop(); });
  return util::Ok();
}

void KnowledgeIngestion::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cancelled_ = true;
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

util::Result<void> KnowledgeIngestion::Resume(const domain::Task& task) {
  const auto* uuid = task.spec.if_contains("file_uuid");
  auto id = util::KnowledgeFileId::Parse(
      uuid && uuid->is_string() ? std::string_view(uuid->as_string()) : std::string_view());
  if (!id) {
    // A task from before tasks recorded their file: the unfinished file that points at it.
    auto unfinished = deps_.repo->ListUnfinishedFiles();
    if (!unfinished) return tl::unexpected(unfinished.error());
    for (const auto& f : *unfinished) {
      if (f.task_id == task.id) id = f.uuid;
    }
  }
  if (!id) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "interrupted: the task does not name its file; add the file again");
  }
  auto file = deps_.repo->GetFile(*id);
  if (!file) {
    return util::Fail(ErrorCode::kNotFound,
                      "interrupted: the file was deleted while its instance was gone");
  }
  if (file->task_id != task.id) {
    return util::Fail(ErrorCode::kConflict, "interrupted: the file is ingested by another task");
  }
  Enqueue(file->uuid);
  return util::Ok();
}

void KnowledgeIngestion::Enqueue(const util::KnowledgeFileId& file) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(Job{file, {}, {}, 0});
  }
  cv_.notify_one();
}

util::Result<std::int64_t> KnowledgeIngestion::EnqueueReembed(const util::KnowledgeBaseId& base,
                                                              util::JsonObject creation_settings) {
  domain::Task task;
  task.task_type = "knowledge-operation";
  task.kind = "knowledge-reembed";
  task.name = "knowledge-reembed-" + base.str();
  task.label = "Re-embed knowledge base " + base.str();
  task.result = nullptr;
  auto id = deps_.tasks->Create(task);
  if (!id) return tl::unexpected(id.error());
  {
    std::lock_guard lock(mu_);
    queue_.push_back(Job{{}, base, std::move(creation_settings), *id});
  }
  cv_.notify_one();
  return *id;
}

void KnowledgeIngestion::Loop() {
  for (;;) {
    Job next;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      if (next.base.empty()) {
        Process(next.file);
      } else {
        Reembed(next);
      }
    } catch (const std::exception& e) {
      spdlog::error("knowledge: a background job failed: {}", e.what());
    }
  }
}

void KnowledgeIngestion::Process(const util::KnowledgeFileId& id) {
  auto file = deps_.repo->GetFile(id);
  if (!file) return;  // deleted while queued
  if (file->status != FileStatus::kPending && file->status != FileStatus::kProcessing) {
    // Ended meanwhile by an instance that lost the task (its saves were refused): the task,
    // claimed here, says how the file ended rather than stay running.
    auto stored = deps_.tasks->Get(file->task_id);
    if (stored && (stored->status == domain::TaskStatus::kPending ||
                   stored->status == domain::TaskStatus::kRunning)) {
      const bool ok = file->status == FileStatus::kCompleted;
      stored->status = ok ? domain::TaskStatus::kSucceeded : domain::TaskStatus::kFailed;
      stored->current_action = ok ? "done" : "failed";
      stored->exception = ok ? "" : file->error;
      if (ok) stored->result = util::JsonObject{{"file_id", file->uuid.str()}};
      (void)deps_.tasks->Save(*stored);
    }
    return;
  }

  // The task the upload created, or a new one when that one was ended by a restart.
  domain::Task task;
  if (auto stored = deps_.tasks->Get(file->task_id);
      stored && (stored->status == domain::TaskStatus::kPending ||
                 stored->status == domain::TaskStatus::kRunning)) {
    task = std::move(*stored);
  } else {
    task.task_type = "knowledge-operation";
    task.kind = "knowledge-store-file";
    task.name = "knowledge-store-file-" + file->uuid.str();
    task.label = "Store file " + file->file_name + " (resumed after a restart)";
    task.result = nullptr;
    task.spec = util::JsonObject{{"file_uuid", file->uuid.str()}};
    auto created = deps_.tasks->Create(task);
    if (!created) {
      spdlog::error("knowledge: cannot create a task for file {}: {}", id.str(),
                    created.error().message);
      return;
    }
    task.id = *created;
    file->task_id = task.id;
  }

  file->status = FileStatus::kProcessing;
  file->updated_at = deps_.clock->Now();
  if (auto r = deps_.repo->UpdateFileStatus(*file); !r) {
    // Deleted meanwhile (or the database failed): the task says so rather than stay pending.
    task.status = domain::TaskStatus::kCancelled;
    task.current_action = r.error().code == ErrorCode::kNotFound ? "deleted" : "failed";
    task.exception = r.error().code == ErrorCode::kNotFound ? "" : r.error().message;
    (void)deps_.tasks->Save(task);
    return;
  }
  task.status = domain::TaskStatus::kRunning;
  task.current_action = "Parsing file";
  task.log += "Parsing " + file->file_name + "\n";
  (void)deps_.tasks->Save(task);

  auto done = Ingest(*file, task);
  if (!done) {
    if (done.error().code == ErrorCode::kCancelled) return;  // resumed at the next start
    if (done.error().code == ErrorCode::kNotFound) {
      // The file or its base was deleted while it was being ingested.
      task.status = domain::TaskStatus::kCancelled;
      task.current_action = "deleted";
      (void)deps_.tasks->Save(task);
      deps_.documents->Remove(file->storage_key);
      return;
    }
    Fail(*file, task, done.error().message);
  }
}

util::Result<void> KnowledgeIngestion::Ingest(domain::KnowledgeFile& file, domain::Task& task) {
  auto base = deps_.repo->GetBase(file.base);
  if (!base) return tl::unexpected(base.error());
  auto settings = ReadCreationSettings(base->creation_settings);
  if (!settings) return tl::unexpected(settings.error());

  const auto type = knowledge::DocumentTypeFor(file.file_name);
  if (!type) return util::Fail(ErrorCode::kInvalidArgument, Unsupported(file.extension));
  auto bytes = deps_.documents->Load(file.storage_key, deps_.limits.max_input_bytes);
  if (!bytes) {
    if (bytes.error().code == ErrorCode::kPayloadTooLarge) {
      return util::Fail(
          ErrorCode::kInvalidArgument,
          fmt::format("the file is larger than {} MiB", deps_.limits.max_input_bytes >> 20));
    }
    return util::Fail(ErrorCode::kInvalidArgument,
                      "the uploaded file is gone from the data directory: upload it again");
  }
  auto text = knowledge::ExtractText(*type, *bytes, deps_.limits);
  if (!text) return util::Fail(ErrorCode::kInvalidArgument, text.error().message);
  bytes->clear();
  bytes->shrink_to_fit();

  task.current_action = "Chunking";
  (void)deps_.tasks->Save(task);
  Split split = SplitText(*text, *settings);
  text->clear();
  if (split.searchable.empty()) {
    return util::Fail(ErrorCode::kInvalidArgument, "the document has no text");
  }

  std::vector<std::string> inputs;
  inputs.reserve(split.searchable.size());
  for (std::size_t i : split.searchable) inputs.push_back(split.chunks[i].text);
  const std::size_t total = inputs.size();
  task.metadata["chunks"] = static_cast<std::int64_t>(total);
  task.metadata["embedded"] = 0;
  task.current_action = fmt::format("Embedding {} passages", total);
  (void)deps_.tasks->Save(task);
  auto vectors = deps_.embedder->Embed(
      settings->embedding_model_uuid, inputs,
      [&](std::size_t embedded) {
        task.metadata["embedded"] = static_cast<std::int64_t>(embedded);
        task.current_action = fmt::format("Embedding passages ({}/{})", embedded, total);
        (void)deps_.tasks->Save(task);
      },
      &cancelled_);
  if (!vectors) return tl::unexpected(vectors.error());
  inputs.clear();
  for (std::size_t k = 0; k < split.searchable.size(); ++k) {
    auto& chunk = split.chunks[split.searchable[k]];
    chunk.vector = (*vectors)[k];
    chunk.keyword_text = knowledge::KeywordText(chunk.text);
  }

  task.current_action = "Indexing";
  (void)deps_.tasks->Save(task);
  auto change = deps_.repo->CompleteFile(file.uuid, split.chunks, deps_.clock->Now());
  if (!change) return tl::unexpected(change.error());
  deps_.indexes->Apply(file.base, *change, *vectors);
  deps_.documents->Remove(file.storage_key);

  task.status = domain::TaskStatus::kSucceeded;
  task.current_action = "done";
  task.log += fmt::format("Stored {} passages\n", change->ids.size());
  task.result = util::JsonObject{{"file_id", file.uuid.str()},
                                 {"chunks", static_cast<std::int64_t>(change->ids.size())}};
  (void)deps_.tasks->Save(task);
  return util::Ok();
}

void KnowledgeIngestion::Reembed(const Job& job) {
  auto task = deps_.tasks->Get(job.task_id);
  if (!task) return;
  auto finish = [&](const std::string& why) {
    task->status = why.empty() ? domain::TaskStatus::kSucceeded : domain::TaskStatus::kFailed;
    task->exception = why;
    task->current_action = why.empty() ? "done" : "failed";
    if (!why.empty()) task->log += "failed: " + why + "\n";
    (void)deps_.tasks->Save(*task);
  };
  auto settings = ReadCreationSettings(job.creation_settings);
  if (!settings) return finish(settings.error().message);
  task->status = domain::TaskStatus::kRunning;
  task->current_action = "Reading passages";
  (void)deps_.tasks->Save(*task);
  // Every passage is embedded before anything is written: a failure leaves the base as it was.
  std::vector<std::int64_t> ids;
  std::vector<std::string> texts;
  for (std::int64_t after = 0;;) {
    auto page = deps_.repo->ChunkTexts(job.base, after, 1000);
    if (!page) return finish(page.error().message);
    if (page->empty()) break;
    for (auto& [id, text] : *page) {
      ids.push_back(id);
      texts.push_back(std::move(text));
    }
    after = ids.back();
  }
  task->metadata["chunks"] = static_cast<std::int64_t>(texts.size());
  auto vectors = deps_.embedder->Embed(
      settings->embedding_model_uuid, texts,
      [&](std::size_t done) {
        task->metadata["embedded"] = static_cast<std::int64_t>(done);
        task->current_action = fmt::format("Embedding passages ({}/{})", done, texts.size());
        (void)deps_.tasks->Save(*task);
      },
      &cancelled_);
  if (!vectors) {
    if (vectors.error().code == ErrorCode::kCancelled) {
      return finish("stopped by a shutdown before it finished; the base keeps its old model");
    }
    return finish(vectors.error().message);
  }
  std::vector<std::pair<std::int64_t, std::vector<float>>> updates;
  updates.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    updates.emplace_back(ids[i], std::move((*vectors)[i]));
  if (auto r = deps_.repo->ReplaceVectors(job.base, updates, job.creation_settings); !r) {
    return finish(r.error().message);
  }
  deps_.indexes->Forget(job.base);
  task->result = util::JsonObject{{"chunks", static_cast<std::int64_t>(ids.size())}};
  finish("");
}

void KnowledgeIngestion::Fail(domain::KnowledgeFile& file, domain::Task& task,
                              const std::string& why) {
  spdlog::warn("knowledge: file {} ({}) failed: {}", file.uuid.str(), file.file_name, why);
  file.status = FileStatus::kFailed;
  file.error = why;
  file.updated_at = deps_.clock->Now();
  deps_.documents->Remove(file.storage_key);
  file.storage_key.clear();
  (void)deps_.repo->UpdateFileStatus(file);
  task.status = domain::TaskStatus::kFailed;
  task.exception = why;
  task.log += "failed: " + why + "\n";
  (void)deps_.tasks->Save(task);
}

}  // namespace sb::services
