#include "services/knowledge_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

namespace sb::services {
namespace {

using util::ErrorCode;
using util::JsonObject;

constexpr std::size_t kMaxNameBytes = 255;
constexpr std::size_t kMaxDescriptionBytes = 4096;
constexpr std::size_t kMaxQueryBytes = 4096;

util::Result<std::string> OptionalText(const JsonObject& body, std::string_view key,
                                       std::size_t max, std::string fallback) {
  const auto* v = body.if_contains(key);
  if (!v || v->is_null()) return fallback;
  if (!v->is_string()) {
    return util::Fail(ErrorCode::kInvalidArgument, fmt::format("{} must be a string", key));
  }
  if (v->as_string().size() > max) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("{} is longer than {} bytes", key, max));
  }
  return std::string(v->as_string());
}

util::Result<JsonObject> OptionalObject(const JsonObject& body, std::string_view key) {
  const auto* v = body.if_contains(key);
  if (!v || v->is_null()) return JsonObject{};
  if (!v->is_object()) {
    return util::Fail(ErrorCode::kInvalidArgument, fmt::format("{} must be an object", key));
  }
  return v->as_object();
}

util::Result<util::KnowledgeBaseId> ParseBase(std::string_view uuid) {
  auto id = util::KnowledgeBaseId::Parse(uuid);
  // A malformed id names no base: the same answer as an unknown one.
  if (!id) return util::Fail(ErrorCode::kNotFound, "knowledge base not found");
  return id;
}

std::string ImageMime(std::string_view ext) {
  if (ext == "png") return "image/png";
  if (ext == "gif") return "image/gif";
  if (ext == "webp") return "image/webp";
  return "image/jpeg";
}

std::string_view EmbeddingModelOf(const JsonObject& creation) {
  const auto* v = creation.if_contains("embedding_model_uuid");
  return v && v->is_string() ? std::string_view(v->as_string()) : std::string_view();
}

}  // namespace

KnowledgeService::KnowledgeService(domain::KnowledgeRepository& repo, TaskService& tasks,
                                   ModelService& models, domain::LlmGateway& gateway,
                                   const util::Clock& clock, KnowledgeOptions options)
    : repo_(repo),
      tasks_(tasks),
      clock_(clock),
      options_(std::move(options)),
      documents_(options_.files_dir / "documents"),
      images_(options_.files_dir / "images"),
      embedder_(models, gateway, options_.embedding_batch_size),
      indexes_(repo) {
  IngestionDeps deps;
  deps.repo = &repo_;
  deps.tasks = &tasks_;
  deps.embedder = &embedder_;
  deps.indexes = &indexes_;
  deps.documents = &documents_;
  deps.clock = &clock_;
  deps.limits = options_.limits;
  ingestion_ = std::make_unique<KnowledgeIngestion>(std::move(deps));
}

KnowledgeService::~KnowledgeService() { Stop(); }

util::Result<void> KnowledgeService::Start() { return ingestion_->Start(); }

util::Result<void> KnowledgeService::Resume(const domain::Task& task) {
  return ingestion_->Resume(task);
}

void KnowledgeService::Stop() {
  ingestion_->Stop();
  indexes_.Stop();
}

util::Result<std::vector<domain::KnowledgeBase>> KnowledgeService::ListBases() {
  return repo_.ListBases();
}

util::Result<domain::KnowledgeBase> KnowledgeService::GetBase(std::string_view uuid) {
  auto id = ParseBase(uuid);
  if (!id) return tl::unexpected(id.error());
  return repo_.GetBase(*id);
}

util::Result<util::KnowledgeBaseId> KnowledgeService::CreateBase(const JsonObject& body) {
  domain::KnowledgeBase base;
  const auto* engine = body.if_contains("knowledge_engine_plugin_id");
  if (!engine || !engine->is_string() || engine->as_string().empty()) {
    return util::Fail(ErrorCode::kInvalidArgument, "knowledge_engine_plugin_id is required");
  }
  auto canonical = CanonicalEngineId(engine->as_string());
  if (!canonical) {
    return util::Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("Knowledge Engine plugin {} not found (this server has {})",
                    std::string(engine->as_string()).substr(0, 100), kBuiltinEngineId));
  }
  base.engine = *canonical;
  auto name = OptionalText(body, "name", kMaxNameBytes, "Untitled");
  if (!name) return tl::unexpected(name.error());
  base.name = name->empty() ? "Untitled" : *name;
  auto description = OptionalText(body, "description", kMaxDescriptionBytes, "");
  if (!description) return tl::unexpected(description.error());
  base.description = std::move(*description);
  auto emoji = OptionalText(body, "emoji", 32, "📚");
  if (!emoji) return tl::unexpected(emoji.error());
  base.emoji = std::move(*emoji);
  auto creation = OptionalObject(body, "creation_settings");
  if (!creation) return tl::unexpected(creation.error());
  auto settings = ReadCreationSettings(*creation);
  if (!settings) return tl::unexpected(settings.error());
  if (auto ok = embedder_.CheckModel(settings->embedding_model_uuid); !ok) {
    return tl::unexpected(ok.error());
  }
  base.creation_settings = std::move(*creation);
  auto retrieval = OptionalObject(body, "retrieval_settings");
  if (!retrieval) return tl::unexpected(retrieval.error());
  if (auto ok = ReadRetrievalSettings(*retrieval, {}); !ok) return tl::unexpected(ok.error());
  base.retrieval_settings = std::move(*retrieval);
  base.uuid = util::KnowledgeBaseId::Generate();
  base.created_at = base.updated_at = clock_.Now();
  if (auto r = repo_.CreateBase(base); !r) return tl::unexpected(r.error());
  return base.uuid;
}

util::Result<std::optional<std::int64_t>> KnowledgeService::UpdateBase(std::string_view uuid,
                                                                       const JsonObject& body) {
  auto base = GetBase(uuid);
  if (!base) return tl::unexpected(base.error());
  auto name = OptionalText(body, "name", kMaxNameBytes, base->name);
  if (!name) return tl::unexpected(name.error());
  if (!name->empty()) base->name = std::move(*name);
  auto description = OptionalText(body, "description", kMaxDescriptionBytes, base->description);
  if (!description) return tl::unexpected(description.error());
  base->description = std::move(*description);
  auto emoji = OptionalText(body, "emoji", 32, base->emoji);
  if (!emoji) return tl::unexpected(emoji.error());
  base->emoji = std::move(*emoji);
  if (body.contains("retrieval_settings")) {
    auto retrieval = OptionalObject(body, "retrieval_settings");
    if (!retrieval) return tl::unexpected(retrieval.error());
    if (auto ok = ReadRetrievalSettings(*retrieval, {}); !ok) return tl::unexpected(ok.error());
    base->retrieval_settings = std::move(*retrieval);
  }
  std::optional<std::int64_t> task;
  if (const auto* c = body.if_contains("creation_settings"); c && !c->is_null()) {
    auto creation = OptionalObject(body, "creation_settings");
    if (!creation) return tl::unexpected(creation.error());
    auto settings = ReadCreationSettings(*creation);
    if (!settings) return tl::unexpected(settings.error());
    if (settings->embedding_model_uuid != EmbeddingModelOf(base->creation_settings)) {
      if (auto ok = embedder_.CheckModel(settings->embedding_model_uuid); !ok) {
        return tl::unexpected(ok.error());
      }
      auto files = repo_.ListFiles(base->uuid);
      if (!files) return tl::unexpected(files.error());
      const auto* reembed = body.if_contains("reembed");
      const bool wants_reembed = reembed && reembed->is_bool() && reembed->as_bool();
      if (!files->empty() && !wants_reembed) {
        return util::Fail(
            ErrorCode::kConflict,
            fmt::format("the embedding model cannot change while the knowledge base has {} "
                        "file(s) embedded with the current one; send \"reembed\": true to "
                        "re-embed every passage with the new model (a task), or delete the "
                        "files first",
                        files->size()));
      }
      if (!files->empty()) {
        // The new model is stored with the new vectors, when the task ends; the other creation
        // settings apply at once (to files added later).
        auto started = ingestion_->EnqueueReembed(base->uuid, *creation);
        if (!started) return tl::unexpected(started.error());
        task = *started;
        (*creation)["embedding_model_uuid"] =
            std::string(EmbeddingModelOf(base->creation_settings));
      }
    }
    base->creation_settings = std::move(*creation);
  }
  base->updated_at = clock_.Now();
  if (auto r = repo_.UpdateBase(*base); !r) return tl::unexpected(r.error());
  return task;
}

util::Result<void> KnowledgeService::DeleteBase(std::string_view uuid) {
  auto id = ParseBase(uuid);
  if (!id) return tl::unexpected(id.error());
  auto keys = repo_.DeleteBase(*id);
  if (!keys) return tl::unexpected(keys.error());
  for (const auto& key : *keys) documents_.Remove(key);
  indexes_.Forget(*id);
  return util::Ok();
}

util::Result<std::string> KnowledgeService::SaveDocument(std::string_view name,
                                                         std::string_view bytes) {
  if (bytes.size() > options_.max_upload_bytes) {
    return util::Fail(ErrorCode::kPayloadTooLarge,
                      fmt::format("File size exceeds {} MiB limit. Please split large files into "
                                  "smaller parts.",
                                  options_.max_upload_bytes >> 20));
  }
  return documents_.Save(name, bytes);
}

util::Result<std::string> KnowledgeService::SaveImage(std::string_view name,
                                                      std::string_view bytes) {
  if (bytes.size() > options_.max_upload_bytes) {
    return util::Fail(ErrorCode::kPayloadTooLarge, fmt::format("Image size exceeds {} MiB limit.",
                                                               options_.max_upload_bytes >> 20));
  }
  const std::string ext = ExtensionOf(SanitizeFileName(name));
  static const std::set<std::string> kAllowed{"jpg", "jpeg", "png", "gif", "webp"};
  if (ext.empty()) {
    return util::Fail(ErrorCode::kInvalidArgument, "Invalid image file: no file extension");
  }
  if (!kAllowed.contains(ext)) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "Invalid image format. Allowed formats: jpg, jpeg, png, gif, webp");
  }
  return images_.Save(name, bytes);
}

util::Result<std::pair<std::string, std::string>> KnowledgeService::LoadImage(
    std::string_view key) {
  auto bytes = images_.Load(key, options_.max_upload_bytes);
  if (!bytes) return util::Fail(ErrorCode::kNotFound, "image not found");
  return std::pair{std::move(*bytes), ImageMime(ExtensionOf(key))};
}

util::Result<std::int64_t> KnowledgeService::AddFile(std::string_view base_uuid,
                                                     std::string_view file_key,
                                                     std::string_view parser_id) {
  auto base = GetBase(base_uuid);
  if (!base) return tl::unexpected(base.error());
  if (!parser_id.empty() && parser_id != kBuiltinParserId) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("parser {} not found (this server has {})",
                                  std::string(parser_id).substr(0, 100), kBuiltinParserId));
  }
  auto size = documents_.Size(file_key);
  if (!size) {
    return util::Fail(
        ErrorCode::kNotFound,
        fmt::format("File {} not found: upload it first (POST /api/v1/files/documents)",
                    std::string(file_key).substr(0, 200)));
  }
  domain::KnowledgeFile file;
  file.uuid = util::KnowledgeFileId::Generate();
  file.base = base->uuid;
  file.file_name = std::string(file_key);
  file.extension = ExtensionOf(file_key);
  file.storage_key = std::string(file_key);
  file.size_bytes = *size;
  file.status = domain::FileStatus::kPending;
  file.created_at = file.updated_at = clock_.Now();

  domain::Task task;
  task.task_type = "knowledge-operation";
  task.kind = "knowledge-store-file";
  task.name = "knowledge-store-file-" + std::string(file_key);
  task.label = "Store file " + std::string(file_key);
  task.result = nullptr;
  task.spec = util::JsonObject{{"file_uuid", file.uuid.str()}};
  auto task_id = tasks_.Create(task);
  if (!task_id) return tl::unexpected(task_id.error());
  file.task_id = *task_id;
  if (auto r = repo_.InsertFile(file); !r) {
    task.id = *task_id;
    task.status = domain::TaskStatus::kFailed;
    task.exception = r.error().message;
    (void)tasks_.Save(task);
    return tl::unexpected(r.error());
  }
  ingestion_->Enqueue(file.uuid);
  return *task_id;
}

util::Result<std::vector<domain::KnowledgeFile>> KnowledgeService::ListFiles(
    std::string_view base_uuid) {
  auto base = GetBase(base_uuid);
  if (!base) return tl::unexpected(base.error());
  return repo_.ListFiles(base->uuid);
}

util::Result<void> KnowledgeService::DeleteFile(std::string_view base_uuid,
                                                std::string_view file_uuid) {
  auto base = ParseBase(base_uuid);
  if (!base) return tl::unexpected(base.error());
  auto id = util::KnowledgeFileId::Parse(file_uuid);
  if (!id) return util::Fail(ErrorCode::kNotFound, "file not found");
  auto file = repo_.GetFile(*id);
  if (!file || file->base != *base) return util::Fail(ErrorCode::kNotFound, "file not found");
  auto change = repo_.DeleteFile(*base, *id);
  if (!change) return tl::unexpected(change.error());
  indexes_.Apply(*base, *change, {});
  documents_.Remove(file->storage_key);
  return util::Ok();
}

util::Result<std::vector<RetrievalHit>> KnowledgeService::Retrieve(std::string_view base_uuid,
                                                                   const std::string& query,
                                                                   const JsonObject& overrides) {
  auto base = GetBase(base_uuid);
  if (!base) return tl::unexpected(base.error());
  auto settings = ReadRetrievalSettings(base->retrieval_settings, overrides);
  if (!settings) return tl::unexpected(settings.error());
  QueryVectors query_vectors;
  return RetrieveFrom(*base, query, *settings, query_vectors);
}

util::Result<std::vector<RetrievalHit>> KnowledgeService::RetrieveFrom(
    const domain::KnowledgeBase& base, const std::string& query, const RetrievalSettings& settings,
    QueryVectors& query_vectors) {
  if (query.size() > kMaxQueryBytes) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("the query is longer than {} bytes", kMaxQueryBytes));
  }
  auto creation = ReadCreationSettings(base.creation_settings);
  if (!creation) return tl::unexpected(creation.error());
  // Candidates beyond top_k: the fusion re-ranks them, and parents dedupe children.
  const std::size_t pool = std::max<std::size_t>(settings.top_k * 4, 20);
  std::map<std::int64_t, knowledge::Candidate> candidates;
  const bool wants_vector = settings.search_type != knowledge::SearchType::kFullText;
  const bool wants_keyword = settings.search_type != knowledge::SearchType::kVector;

  std::shared_ptr<const knowledge::VectorIndex> index;
  std::vector<float> query_vector;
  if (wants_vector) {
    auto got = indexes_.Get(base.uuid);
    if (!got) return tl::unexpected(got.error());
    index = std::move(*got);
    if (index && index->size() > 0) {
      auto known = query_vectors.find(creation->embedding_model_uuid);
      if (known == query_vectors.end()) {
        auto vectors = embedder_.Embed(creation->embedding_model_uuid, {query});
        if (!vectors) return tl::unexpected(vectors.error());
        known = query_vectors.emplace(creation->embedding_model_uuid, std::move(vectors->front()))
                    .first;
      }
      query_vector = known->second;
      for (const auto& hit : index->Search(query_vector, pool)) {
        candidates[hit.id].id = hit.id;
        candidates[hit.id].cosine = hit.score;
      }
    }
  }
  if (wants_keyword) {
    const std::string match = knowledge::KeywordQuery(query);
    if (!match.empty()) {
      auto hits = repo_.KeywordSearch(base.uuid, match, pool);
      if (!hits) return tl::unexpected(hits.error());
      for (const auto& hit : *hits) {
        auto& c = candidates[hit.chunk_id];
        c.id = hit.chunk_id;
        c.bm25 = hit.bm25;
        // The keyword side's finds get their vector score too.
        if (!c.cosine && index && !query_vector.empty()) {
          c.cosine = index->Similarity(hit.chunk_id, query_vector);
        }
      }
    }
  }
  std::vector<knowledge::Candidate> list;
  list.reserve(candidates.size());
  for (auto& [id, c] : candidates) list.push_back(c);
  // Ranked past top_k so that children of one parent, merged below, still leave top_k passages.
  auto ranked = knowledge::RankCandidates(list, settings.search_type, settings.vector_weight,
                                          settings.score_threshold, pool);
  std::vector<std::int64_t> ids;
  ids.reserve(ranked.size());
  for (const auto& r : ranked) ids.push_back(r.id);
  auto passages = repo_.Passages(ids);
  if (!passages) return tl::unexpected(passages.error());
  std::vector<RetrievalHit> out;
  std::set<std::int64_t> returned;
  std::size_t next = 0;
  for (auto& p : *passages) {
    while (next < ranked.size() && ranked[next].id != p.chunk_id) ++next;
    if (next == ranked.size()) break;
    if (!returned.insert(p.returned_id).second) continue;  // a sibling already brought the parent
    out.push_back({std::move(p), ranked[next]});
    if (out.size() == settings.top_k) break;
  }
  return out;
}

util::Result<std::vector<domain::RetrievedPassage>> KnowledgeService::RetrieveForMessage(
    const std::vector<std::string>& base_uuids, const std::string& query) {
  std::vector<domain::RetrievedPassage> out;
  QueryVectors query_vectors;  // one embedding of the message per model, not per base
  for (const auto& uuid : base_uuids) {
    auto base = GetBase(uuid);
    if (!base) {
      if (base.error().code == ErrorCode::kNotFound) continue;
      return tl::unexpected(base.error());
    }
    auto settings = ReadRetrievalSettings(base->retrieval_settings, {});
    if (!settings) return tl::unexpected(settings.error());
    auto hits = RetrieveFrom(*base, query, *settings, query_vectors);
    if (!hits) {
      return util::Fail(hits.error().code,
                        fmt::format("knowledge base {}: {}", base->name, hits.error().message));
    }
    for (auto& h : *hits) {
      out.push_back({base->uuid.str(), std::move(h.passage.file_name), std::move(h.passage.text),
                     h.score.score});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.score > b.score; });
  return out;
}

}  // namespace sb::services
