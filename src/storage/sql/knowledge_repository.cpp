#include "storage/sql/knowledge_repository.hpp"

#include <fmt/format.h>

#include <cstring>

#include "storage/sql/row_codec.hpp"

namespace sb::storage::sql {

namespace {

using domain::FileStatus;
using util::ErrorCode;

#define SB_KB_COLUMNS                                                                           \
  "uuid, name, description, emoji, engine, creation_settings, retrieval_settings, created_at, " \
  "updated_at"
#define SB_FILE_COLUMNS                                                                          \
  "uuid, base_uuid, file_name, extension, storage_key, size_bytes, status, error, chunk_count, " \
  "task_id, created_at, updated_at"

util::Result<domain::KnowledgeBase> ReadBase(const Statement& s) {
  domain::KnowledgeBase b;
  b.uuid = util::KnowledgeBaseId::FromTrusted(s.Text(0));
  b.name = s.Text(1);
  b.description = s.Text(2);
  b.emoji = s.Text(3);
  b.engine = s.Text(4);
  auto creation = ObjectFromText(s.Text(5), "knowledge base creation_settings");
  if (!creation) return tl::make_unexpected(creation.error());
  b.creation_settings = std::move(*creation);
  auto retrieval = ObjectFromText(s.Text(6), "knowledge base retrieval_settings");
  if (!retrieval) return tl::make_unexpected(retrieval.error());
  b.retrieval_settings = std::move(*retrieval);
  b.created_at = TimeAt(s.Int64(7));
  b.updated_at = TimeAt(s.Int64(8));
  return b;
}

util::Result<FileStatus> FileStatusFromText(std::string_view text) {
  for (auto status : {FileStatus::kPending, FileStatus::kProcessing, FileStatus::kCompleted,
                      FileStatus::kFailed}) {
    if (text == domain::FileStatusName(status)) return status;
  }
  return util::Fail(ErrorCode::kInternal, "stored knowledge file status is damaged");
}

util::Result<domain::KnowledgeFile> ReadFile(const Statement& s) {
  domain::KnowledgeFile f;
  f.uuid = util::KnowledgeFileId::FromTrusted(s.Text(0));
  f.base = util::KnowledgeBaseId::FromTrusted(s.Text(1));
  f.file_name = s.Text(2);
  f.extension = s.Text(3);
  f.storage_key = s.Text(4);
  f.size_bytes = s.Int64(5);
  auto status = FileStatusFromText(s.Text(6));
  if (!status) return tl::make_unexpected(status.error());
  f.status = *status;
  f.error = s.Text(7);
  f.chunk_count = s.Int64(8);
  f.task_id = s.Int64(9);
  f.created_at = TimeAt(s.Int64(10));
  f.updated_at = TimeAt(s.Int64(11));
  return f;
}

template <typename T, typename ReadFn>
util::Result<std::vector<T>> ReadAll(util::Result<Statement> stmt, ReadFn read) {
  if (!stmt) return tl::make_unexpected(stmt.error());
  std::vector<T> out;
  for (;;) {
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return out;
    auto item = read(*stmt);
    if (!item) return tl::make_unexpected(item.error());
    out.push_back(std::move(*item));
  }
}

std::span<const std::byte> BytesOf(const std::vector<float>& v) {
  return std::as_bytes(std::span<const float>(v));
}

util::Error BaseNotFound(const util::KnowledgeBaseId& id) {
  return {ErrorCode::kNotFound, fmt::format("knowledge base {} not found", id.str())};
}
util::Error FileNotFound(const util::KnowledgeFileId& id) {
  return {ErrorCode::kNotFound, fmt::format("file {} not found", id.str())};
}

// Moves the base's chunk generation on and records both ends in `change`.
util::Result<void> BumpGeneration(Connection& c, const util::KnowledgeBaseId& base,
                                  util::TimePoint now, domain::ChunkChange* change = nullptr) {
  auto stmt = Query(c, "SELECT chunk_generation FROM knowledge_bases WHERE uuid = ?", base.str());
  if (!stmt) return tl::make_unexpected(stmt.error());
  auto row = stmt->Step();
  if (!row) return tl::make_unexpected(row.error());
  if (!*row) return tl::make_unexpected(BaseNotFound(base));
  const std::int64_t before = stmt->Int64(0);
  auto r =
      Execute(c, "UPDATE knowledge_bases SET chunk_generation = ?, updated_at = ? WHERE uuid = ?",
              before + 1, Millis(now), base.str());
  if (!r) return tl::make_unexpected(r.error());
  if (change) {
    change->generation_before = before;
    change->generation_after = before + 1;
  }
  return util::Ok();
}

}  // namespace

util::Result<void> SqlKnowledgeRepository::CreateBase(const domain::KnowledgeBase& b) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto r = Execute(
        c, "INSERT INTO knowledge_bases (" SB_KB_COLUMNS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        b.uuid.str(), b.name, b.description, b.emoji, b.engine, JsonToText(b.creation_settings),
        JsonToText(b.retrieval_settings), Millis(b.created_at), Millis(b.updated_at));
    if (!r) return tl::make_unexpected(r.error());
    return util::Ok();
  });
}

util::Result<std::vector<domain::KnowledgeBase>> SqlKnowledgeRepository::ListBases() {
  return db_.Read([&](Connection& c) {
    return ReadAll<domain::KnowledgeBase>(
        Query(c, "SELECT " SB_KB_COLUMNS " FROM knowledge_bases ORDER BY created_at, rowid"),
        ReadBase);
  });
}

util::Result<domain::KnowledgeBase> SqlKnowledgeRepository::GetBase(
    const util::KnowledgeBaseId& id) {
  return db_.Read([&](Connection& c) -> util::Result<domain::KnowledgeBase> {
    auto stmt = Query(c, "SELECT " SB_KB_COLUMNS " FROM knowledge_bases WHERE uuid = ?", id.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(BaseNotFound(id));
    return ReadBase(*stmt);
  });
}

util::Result<void> SqlKnowledgeRepository::UpdateBase(const domain::KnowledgeBase& b) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto r = Execute(c,
                     "UPDATE knowledge_bases SET name = ?, description = ?, emoji = ?, "
                     "creation_settings = ?, retrieval_settings = ?, updated_at = ? WHERE uuid = ?",
                     b.name, b.description, b.emoji, JsonToText(b.creation_settings),
                     JsonToText(b.retrieval_settings), Millis(b.updated_at), b.uuid.str());
    if (!r) return tl::make_unexpected(r.error());
    if (*r == 0) return tl::make_unexpected(BaseNotFound(b.uuid));
    return util::Ok();
  });
}

util::Result<std::vector<std::string>> SqlKnowledgeRepository::DeleteBase(
    const util::KnowledgeBaseId& id) {
  return db_.Write([&](Connection& c) -> util::Result<std::vector<std::string>> {
    auto keys = ReadAll<std::string>(
        Query(c,
              "SELECT storage_key FROM knowledge_files WHERE base_uuid = ? AND storage_key != ''",
              id.str()),
        [](const Statement& s) -> util::Result<std::string> { return s.Text(0); });
    if (!keys) return tl::make_unexpected(keys.error());
    if (auto r = Execute(c, "DELETE FROM knowledge_fts WHERE base_uuid = ?", id.str()); !r) {
      return tl::make_unexpected(r.error());
    }
    // Chunks and files go with the base (ON DELETE CASCADE).
    auto r = Execute(c, "DELETE FROM knowledge_bases WHERE uuid = ?", id.str());
    if (!r) return tl::make_unexpected(r.error());
    if (*r == 0) return tl::make_unexpected(BaseNotFound(id));
    return std::move(*keys);
  });
}

util::Result<void> SqlKnowledgeRepository::InsertFile(const domain::KnowledgeFile& f) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto stmt = Query(c,
                      "INSERT INTO knowledge_files (" SB_FILE_COLUMNS
                      ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      f.uuid.str(), f.base.str(), f.file_name, f.extension, f.storage_key,
                      f.size_bytes, domain::FileStatusName(f.status), f.error, f.chunk_count,
                      f.task_id, Millis(f.created_at), Millis(f.updated_at));
    if (!stmt) return tl::make_unexpected(stmt.error());
    if (auto r = stmt->Run(); !r) {
      if (stmt->FailedOnForeignKey()) return tl::make_unexpected(BaseNotFound(f.base));
      return tl::make_unexpected(r.error());
    }
    return util::Ok();
  });
}

util::Result<domain::KnowledgeFile> SqlKnowledgeRepository::GetFile(
    const util::KnowledgeFileId& id) {
  return db_.Read([&](Connection& c) -> util::Result<domain::KnowledgeFile> {
    auto stmt =
        Query(c, "SELECT " SB_FILE_COLUMNS " FROM knowledge_files WHERE uuid = ?", id.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(FileNotFound(id));
    return ReadFile(*stmt);
  });
}

util::Result<std::vector<domain::KnowledgeFile>> SqlKnowledgeRepository::ListFiles(
    const util::KnowledgeBaseId& base) {
  return db_.Read([&](Connection& c) {
    return ReadAll<domain::KnowledgeFile>(
        Query(c,
              "SELECT " SB_FILE_COLUMNS
              " FROM knowledge_files WHERE base_uuid = ? ORDER BY created_at, rowid",
              base.str()),
        ReadFile);
  });
}

util::Result<std::vector<domain::KnowledgeFile>> SqlKnowledgeRepository::ListUnfinishedFiles() {
  return db_.Read([&](Connection& c) {
    return ReadAll<domain::KnowledgeFile>(
        Query(c, "SELECT " SB_FILE_COLUMNS
                 " FROM knowledge_files WHERE status IN ('pending', 'processing') "
                 "ORDER BY created_at, rowid"),
        ReadFile);
  });
}

util::Result<void> SqlKnowledgeRepository::UpdateFileStatus(const domain::KnowledgeFile& f) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    auto r = Execute(c,
                     "UPDATE knowledge_files SET status = ?, error = ?, task_id = ?, "
                     "storage_key = ?, updated_at = ? WHERE uuid = ?",
                     domain::FileStatusName(f.status), f.error, f.task_id, f.storage_key,
                     Millis(f.updated_at), f.uuid.str());
    if (!r) return tl::make_unexpected(r.error());
    if (*r == 0) return tl::make_unexpected(FileNotFound(f.uuid));
    return util::Ok();
  });
}

util::Result<domain::ChunkChange> SqlKnowledgeRepository::CompleteFile(
    const util::KnowledgeFileId& id, const std::vector<domain::NewChunk>& chunks,
    util::TimePoint now) {
  return db_.Write([&](Connection& c) -> util::Result<domain::ChunkChange> {
    auto base_stmt = Query(c, "SELECT base_uuid FROM knowledge_files WHERE uuid = ?", id.str());
    if (!base_stmt) return tl::make_unexpected(base_stmt.error());
    auto found = base_stmt->Step();
    if (!found) return tl::make_unexpected(found.error());
    if (!*found) return tl::make_unexpected(FileNotFound(id));
    const auto base = util::KnowledgeBaseId::FromTrusted(base_stmt->Text(0));

    std::vector<std::int64_t> all_ids;  // by batch index, for parents
    std::vector<std::int64_t> searchable;
    all_ids.reserve(chunks.size());
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const auto& chunk = chunks[i];
      std::optional<std::int64_t> parent;
      if (chunk.parent && *chunk.parent < i) parent = all_ids[*chunk.parent];
      auto stmt = c.Prepare(
          "INSERT INTO knowledge_chunks (base_uuid, file_uuid, parent_id, ordinal, text, vector) "
          "VALUES (?, ?, ?, ?, ?, ?) RETURNING id");
      if (!stmt) return tl::make_unexpected(stmt.error());
      stmt->Bind(1, base.str()).Bind(2, id.str()).Bind(3, parent);
      stmt->Bind(4, static_cast<std::int64_t>(i)).Bind(5, chunk.text);
      if (chunk.vector.empty()) {
        stmt->BindNull(6);
      } else {
        stmt->BindBlob(6, BytesOf(chunk.vector));
      }
      auto row = stmt->Step();
      if (!row) return tl::make_unexpected(row.error());
      const std::int64_t chunk_id = stmt->Int64(0);
      if (auto rest = stmt->Run(); !rest) return tl::make_unexpected(rest.error());
      all_ids.push_back(chunk_id);
      if (chunk.vector.empty()) continue;
      searchable.push_back(chunk_id);
      auto fts = Execute(c, "INSERT INTO knowledge_fts (rowid, text, base_uuid) VALUES (?, ?, ?)",
                         chunk_id, chunk.keyword_text, base.str());
      if (!fts) return tl::make_unexpected(fts.error());
    }
    auto r = Execute(c,
                     "UPDATE knowledge_files SET status = 'completed', error = '', "
                     "chunk_count = ?, storage_key = '', updated_at = ? WHERE uuid = ?",
                     static_cast<std::int64_t>(searchable.size()), Millis(now), id.str());
    if (!r) return tl::make_unexpected(r.error());
    domain::ChunkChange change;
    if (auto bumped = BumpGeneration(c, base, now, &change); !bumped) {
      return tl::make_unexpected(bumped.error());
    }
    change.ids = std::move(searchable);
    return change;
  });
}

util::Result<domain::ChunkChange> SqlKnowledgeRepository::DeleteFile(
    const util::KnowledgeBaseId& base, const util::KnowledgeFileId& id) {
  return db_.Write([&](Connection& c) -> util::Result<domain::ChunkChange> {
    auto ids = ReadAll<std::int64_t>(
        Query(c,
              "SELECT id FROM knowledge_chunks WHERE file_uuid = ? AND base_uuid = ? "
              "AND vector IS NOT NULL",
              id.str(), base.str()),
        [](const Statement& s) -> util::Result<std::int64_t> { return s.Int64(0); });
    if (!ids) return tl::make_unexpected(ids.error());
    for (std::int64_t chunk_id : *ids) {
      if (auto r = Execute(c, "DELETE FROM knowledge_fts WHERE rowid = ?", chunk_id); !r) {
        return tl::make_unexpected(r.error());
      }
    }
    auto r = Execute(c, "DELETE FROM knowledge_files WHERE uuid = ? AND base_uuid = ?", id.str(),
                     base.str());
    if (!r) return tl::make_unexpected(r.error());
    if (*r == 0) return tl::make_unexpected(FileNotFound(id));
    domain::ChunkChange change;
    if (auto bumped = BumpGeneration(c, base, util::SystemClock().Now(), &change); !bumped) {
      return tl::make_unexpected(bumped.error());
    }
    change.ids = std::move(*ids);
    return change;
  });
}

util::Result<std::int64_t> SqlKnowledgeRepository::ChunkGeneration(
    const util::KnowledgeBaseId& base) {
  return db_.Read([&](Connection& c) -> util::Result<std::int64_t> {
    auto stmt = Query(c, "SELECT chunk_generation FROM knowledge_bases WHERE uuid = ?", base.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    auto row = stmt->Step();
    if (!row) return tl::make_unexpected(row.error());
    if (!*row) return tl::make_unexpected(BaseNotFound(base));
    return stmt->Int64(0);
  });
}

util::Result<std::int64_t> SqlKnowledgeRepository::ForEachVector(
    const util::KnowledgeBaseId& base,
    const std::function<void(std::int64_t, std::span<const float>)>& visit) {
  return db_.Read([&](Connection& c) -> util::Result<std::int64_t> {
    auto gen = Query(c, "SELECT chunk_generation FROM knowledge_bases WHERE uuid = ?", base.str());
    if (!gen) return tl::make_unexpected(gen.error());
    auto found = gen->Step();
    if (!found) return tl::make_unexpected(found.error());
    if (!*found) return tl::make_unexpected(BaseNotFound(base));
    const std::int64_t generation = gen->Int64(0);
    auto stmt = Query(c,
                      "SELECT id, vector FROM knowledge_chunks WHERE base_uuid = ? AND vector IS "
                      "NOT NULL ORDER BY id",
                      base.str());
    if (!stmt) return tl::make_unexpected(stmt.error());
    std::vector<float> buffer;
    for (;;) {
      auto row = stmt->Step();
      if (!row) return tl::make_unexpected(row.error());
      if (!*row) break;
      const auto bytes = stmt->Blob(1);
      // Copied out: a blob's bytes need not be aligned for float.
      buffer.resize(bytes.size() / sizeof(float));
      if (!buffer.empty()) std::memcpy(buffer.data(), bytes.data(), buffer.size() * sizeof(float));
      visit(stmt->Int64(0), buffer);
    }
    return generation;
  });
}

util::Result<std::vector<std::pair<std::int64_t, std::string>>> SqlKnowledgeRepository::ChunkTexts(
    const util::KnowledgeBaseId& base, std::int64_t after_id, std::size_t limit) {
  return db_.Read([&](Connection& c) {
    return ReadAll<std::pair<std::int64_t, std::string>>(
        Query(c,
              "SELECT id, text FROM knowledge_chunks WHERE base_uuid = ? AND vector IS NOT NULL "
              "AND id > ? ORDER BY id LIMIT ?",
              base.str(), after_id, static_cast<std::int64_t>(limit)),
        [](const Statement& s) -> util::Result<std::pair<std::int64_t, std::string>> {
          return std::pair{s.Int64(0), s.Text(1)};
        });
  });
}

util::Result<void> SqlKnowledgeRepository::ReplaceVectors(
    const util::KnowledgeBaseId& base,
    const std::vector<std::pair<std::int64_t, std::vector<float>>>& vectors,
    const util::JsonObject& creation_settings) {
  return db_.Write([&](Connection& c) -> util::Result<void> {
    for (const auto& [id, vector] : vectors) {
      auto stmt =
          c.Prepare("UPDATE knowledge_chunks SET vector = ? WHERE id = ? AND base_uuid = ?");
      if (!stmt) return tl::make_unexpected(stmt.error());
      stmt->BindBlob(1, BytesOf(vector)).Bind(2, id).Bind(3, base.str());
      if (auto r = stmt->Run(); !r) return tl::make_unexpected(r.error());
    }
    auto r = Execute(c, "UPDATE knowledge_bases SET creation_settings = ? WHERE uuid = ?",
                     JsonToText(creation_settings), base.str());
    if (!r) return tl::make_unexpected(r.error());
    return BumpGeneration(c, base, util::SystemClock().Now());
  });
}

util::Result<std::vector<domain::KeywordHit>> SqlKnowledgeRepository::KeywordSearch(
    const util::KnowledgeBaseId& base, const std::string& match, std::size_t limit) {
  return db_.Read([&](Connection& c) -> util::Result<std::vector<domain::KeywordHit>> {
    auto hit = [](const Statement& s) -> util::Result<domain::KeywordHit> {
      return domain::KeywordHit{s.Int64(0), s.Double(1)};
    };
    if (c.dialect() == Dialect::kSqlite) {
      return ReadAll<domain::KeywordHit>(
          Query(c,
                "SELECT rowid, rank FROM knowledge_fts WHERE knowledge_fts MATCH ? "
                "AND base_uuid = ? ORDER BY rank LIMIT ?",
                match, base.str(), static_cast<std::int64_t>(limit)),
          hit);
    }
    // PostgreSQL's full-text search over the same spaced-apart text (migration 10 of
    // postgres/pg_schema.cpp). websearch_to_tsquery reads KeywordQuery's quoted phrases joined by
    // OR as they are, and never fails on what a user typed. ts_rank grows with the match: negated
    // so that, as with FTS5's bm25 rank, lower is better.
    return ReadAll<domain::KeywordHit>(
        Query(c,
              "SELECT f.rowid, -ts_rank(f.document, q, 1) AS rank "
              "FROM knowledge_fts f, websearch_to_tsquery('simple', ?) AS q "
              "WHERE f.document @@ q AND f.base_uuid = ? ORDER BY rank, f.rowid LIMIT ?",
              match, base.str(), static_cast<std::int64_t>(limit)),
        hit);
  });
}

util::Result<std::vector<domain::Passage>> SqlKnowledgeRepository::Passages(
    const std::vector<std::int64_t>& ids) {
  return db_.Read([&](Connection& c) -> util::Result<std::vector<domain::Passage>> {
    std::vector<domain::Passage> out;
    out.reserve(ids.size());
    for (std::int64_t id : ids) {
      // A child returns its parent's text (parent-child mode).
      auto stmt = Query(c,
                        "SELECT k.id, COALESCE(p.id, k.id), k.file_uuid, f.file_name, "
                        "COALESCE(p.text, k.text), k.ordinal FROM knowledge_chunks k "
                        "JOIN knowledge_files f ON f.uuid = k.file_uuid "
                        "LEFT JOIN knowledge_chunks p ON p.id = k.parent_id WHERE k.id = ?",
                        id);
      if (!stmt) return tl::make_unexpected(stmt.error());
      auto row = stmt->Step();
      if (!row) return tl::make_unexpected(row.error());
      if (!*row) continue;
      domain::Passage p;
      p.chunk_id = stmt->Int64(0);
      p.returned_id = stmt->Int64(1);
      p.file = util::KnowledgeFileId::FromTrusted(stmt->Text(2));
      p.file_name = stmt->Text(3);
      p.text = stmt->Text(4);
      p.ordinal = stmt->Int(5);
      out.push_back(std::move(p));
    }
    return out;
  });
}

}  // namespace sb::storage::sql
