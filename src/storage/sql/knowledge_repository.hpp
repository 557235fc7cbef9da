// KnowledgeRepository over SQL (SQLite or PostgreSQL): bases, files and chunks in tables, the
// keyword side in `knowledge_fts` (SQLite: an FTS5 table; PostgreSQL: a table with a tsvector)
// kept in step in the same transactions (FTS5 has no foreign keys to cascade with).
#pragma once

#include "domain/knowledge.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlKnowledgeRepository final : public domain::KnowledgeRepository {
 public:
  explicit SqlKnowledgeRepository(Database& db) : db_(db) {}

  util::Result<void> CreateBase(const domain::KnowledgeBase& base) override;
  util::Result<std::vector<domain::KnowledgeBase>> ListBases() override;
  util::Result<domain::KnowledgeBase> GetBase(const util::KnowledgeBaseId& id) override;
  util::Result<void> UpdateBase(const domain::KnowledgeBase& base) override;
  util::Result<std::vector<std::string>> DeleteBase(const util::KnowledgeBaseId& id) override;

  util::Result<void> InsertFile(const domain::KnowledgeFile& file) override;
  util::Result<domain::KnowledgeFile> GetFile(const util::KnowledgeFileId& id) override;
  util::Result<std::vector<domain::KnowledgeFile>> ListFiles(
      const util::KnowledgeBaseId& base) override;
  util::Result<std::vector<domain::KnowledgeFile>> ListUnfinishedFiles() override;
  util::Result<void> UpdateFileStatus(const domain::KnowledgeFile& file) override;
  util::Result<domain::ChunkChange> CompleteFile(const util::KnowledgeFileId& id,
                                                 const std::vector<domain::NewChunk>& chunks,
                                                 util::TimePoint now) override;
  util::Result<domain::ChunkChange> DeleteFile(const util::KnowledgeBaseId& base,
                                               const util::KnowledgeFileId& id) override;

  util::Result<std::int64_t> ChunkGeneration(const util::KnowledgeBaseId& base) override;
  util::Result<std::int64_t> ForEachVector(
      const util::KnowledgeBaseId& base,
      const std::function<void(std::int64_t, std::span<const float>)>& visit) override;
  util::Result<std::vector<std::pair<std::int64_t, std::string>>> ChunkTexts(
      const util::KnowledgeBaseId& base, std::int64_t after_id, std::size_t limit) override;
  util::Result<void> ReplaceVectors(
      const util::KnowledgeBaseId& base,
      const std::vector<std::pair<std::int64_t, std::vector<float>>>& vectors,
      const util::JsonObject& creation_settings) override;
  util::Result<std::vector<domain::KeywordHit>> KeywordSearch(const util::KnowledgeBaseId& base,
                                                              const std::string& match,
                                                              std::size_t limit) override;
  util::Result<std::vector<domain::Passage>> Passages(
      const std::vector<std::int64_t>& ids) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
