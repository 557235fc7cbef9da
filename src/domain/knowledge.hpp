// Knowledge bases: documents uploaded into a base are split into passages (chunks), embedded with
// the base's embedding model, and found again by vector and keyword search. The records are in
// LangBot's shape (a base names its engine and keeps the engine's creation and retrieval settings
// as JSON); chunks, vectors and the keyword index live beside them in the same database.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace sb::domain {

struct KnowledgeBase {
  util::KnowledgeBaseId uuid;
  std::string name;
  std::string description;
  std::string emoji;
  std::string engine;  // knowledge_engine_plugin_id, e.g. "switchboard/builtin"
  util::JsonObject creation_settings;
  util::JsonObject retrieval_settings;
  util::TimePoint created_at;
  util::TimePoint updated_at;
};

enum class FileStatus { kPending, kProcessing, kCompleted, kFailed };
const char* FileStatusName(FileStatus status);  // "pending", "processing", ...

struct KnowledgeFile {
  util::KnowledgeFileId uuid;
  util::KnowledgeBaseId base;
  std::string file_name;    // the sanitised name the user uploaded, for people and the model
  std::string extension;    // lower case, without the dot
  std::string storage_key;  // the upload under the data directory, until ingested
  std::int64_t size_bytes = 0;
  FileStatus status = FileStatus::kPending;
  std::string error;  // why it failed, for a person
  std::int64_t chunk_count = 0;
  std::int64_t task_id = 0;  // the ingestion task
  util::TimePoint created_at;
  util::TimePoint updated_at;
};

// A passage to store: searchable ones carry a vector and go into the keyword index; a parent
// (parent-child mode) carries neither and is what its children return.
struct NewChunk {
  std::string text;
  std::string keyword_text;           // what the keyword index stores; empty for a parent
  std::vector<float> vector;          // empty for a parent
  std::optional<std::size_t> parent;  // index of the parent in the same batch
};

struct KeywordHit {
  std::int64_t chunk_id = 0;
  double bm25 = 0;  // FTS5's bm25(): negative, lower is better
};

// What retrieval hands back for a chunk it picked: the text to show (the parent's text for a
// child) and where it came from.
struct Passage {
  std::int64_t chunk_id = 0;
  std::int64_t returned_id = 0;  // the parent's id for a child, else chunk_id
  util::KnowledgeFileId file;
  std::string file_name;
  std::string text;
  int ordinal = 0;  // position of the chunk in its file
};

// What a change of a base's chunks did, so an in-memory index at `generation_before` can follow
// it instead of being rebuilt.
struct ChunkChange {
  std::vector<std::int64_t> ids;  // searchable chunks added (CompleteFile) or removed (DeleteFile)
  std::int64_t generation_before = 0;
  std::int64_t generation_after = 0;
};

// Implementations are thread-safe and may block: call them from a blocking thread.
class KnowledgeRepository {
 public:
  virtual ~KnowledgeRepository() = default;

  virtual util::Result<void> CreateBase(const KnowledgeBase& base) = 0;
  virtual util::Result<std::vector<KnowledgeBase>> ListBases() = 0;
  virtual util::Result<KnowledgeBase> GetBase(const util::KnowledgeBaseId& id) = 0;  // kNotFound
  // Replaces name, description, emoji, creation and retrieval settings, updated_at.
  virtual util::Result<void> UpdateBase(const KnowledgeBase& base) = 0;
  // The base, its files, chunks and keyword entries, in one transaction. Returns the storage
  // keys of uploads not ingested yet, for the caller to remove. kNotFound when absent.
  virtual util::Result<std::vector<std::string>> DeleteBase(const util::KnowledgeBaseId& id) = 0;

  virtual util::Result<void> InsertFile(const KnowledgeFile& file) = 0;
  virtual util::Result<KnowledgeFile> GetFile(const util::KnowledgeFileId& id) = 0;  // kNotFound
  virtual util::Result<std::vector<KnowledgeFile>> ListFiles(const util::KnowledgeBaseId& base) = 0;
  // Files still pending or processing, oldest first (ingestion resumes them after a restart).
  virtual util::Result<std::vector<KnowledgeFile>> ListUnfinishedFiles() = 0;
  // Status, error, task id and updated_at. kNotFound when the file was deleted meanwhile.
  virtual util::Result<void> UpdateFileStatus(const KnowledgeFile& file) = 0;
  // Stores the file's chunks and marks it completed with their count, in one transaction: a
  // file is either completed with all its chunks or has none. The change lists the new ids of the
  // searchable chunks, in order, for the caller's index. kNotFound when the file was deleted.
  virtual util::Result<ChunkChange> CompleteFile(const util::KnowledgeFileId& id,
                                                 const std::vector<NewChunk>& chunks,
                                                 util::TimePoint now) = 0;
  // The file, its chunks and keyword entries; the change lists the searchable chunks removed.
  virtual util::Result<ChunkChange> DeleteFile(const util::KnowledgeBaseId& base,
                                               const util::KnowledgeFileId& id) = 0;

  // How many times the base's chunks changed: an index built at another generation is stale.
  virtual util::Result<std::int64_t> ChunkGeneration(const util::KnowledgeBaseId& base) = 0;
  // Every searchable chunk's vector, for building an index; returns the generation read.
  virtual util::Result<std::int64_t> ForEachVector(
      const util::KnowledgeBaseId& base,
      const std::function<void(std::int64_t id, std::span<const float> vector)>& visit) = 0;
  // The searchable chunks of the base, for re-embedding: id and text, in id order, `limit` from
  // after `after_id`.
  virtual util::Result<std::vector<std::pair<std::int64_t, std::string>>> ChunkTexts(
      const util::KnowledgeBaseId& base, std::int64_t after_id, std::size_t limit) = 0;
  // Replaces vectors of existing chunks and the base's creation settings (re-embedding with
  // another model), in one transaction: the base never holds vectors of two models.
  virtual util::Result<void> ReplaceVectors(
      const util::KnowledgeBaseId& base,
      const std::vector<std::pair<std::int64_t, std::vector<float>>>& vectors,
      const util::JsonObject& creation_settings) = 0;
  // Searchable chunks matching an FTS5 expression, best first.
  virtual util::Result<std::vector<KeywordHit>> KeywordSearch(const util::KnowledgeBaseId& base,
                                                              const std::string& match,
                                                              std::size_t limit) = 0;
  // The passages of chunk ids (unknown ids are skipped), in the order given.
  virtual util::Result<std::vector<Passage>> Passages(const std::vector<std::int64_t>& ids) = 0;
};

// What the pipeline's local agent asks of knowledge bases: the passages for a user's message, from
// each base with that base's own retrieval settings, best first.
struct RetrievedPassage {
  std::string base_uuid;
  std::string file_name;
  std::string text;
  double score = 0;
};

// Thread-safe; blocking (embeds the query): call from a thread that may block.
class KnowledgeRetriever {
 public:
  virtual ~KnowledgeRetriever() = default;
  // Unknown bases are skipped; a base that fails makes the whole call fail with its reason.
  virtual util::Result<std::vector<RetrievedPassage>> RetrieveForMessage(
      const std::vector<std::string>& base_uuids, const std::string& query) = 0;
};

}  // namespace sb::domain
