// `/knowledge/*` and `/files/*` in LangBot 4.9.5's shapes: knowledge bases of the built-in
// engine, their files and retrieval, the engine and parser catalogue, the RAG-migration routes
// (nothing to migrate here), and uploads of documents and images.
#include <fmt/format.h>

#include "http/api/api.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"
#include "http/multipart.hpp"
#include "services/knowledge_engine.hpp"

namespace sb::http::api {
namespace {

using util::ErrorCode;
using util::JsonArray;
using util::JsonObject;

JsonObject EncodeBase(const domain::KnowledgeBase& b) {
  return JsonObject{{"uuid", b.uuid.str()},
                    {"name", b.name},
                    {"description", b.description},
                    {"emoji", b.emoji},
                    {"created_at", util::FormatRfc3339(b.created_at)},
                    {"updated_at", util::FormatRfc3339(b.updated_at)},
                    {"knowledge_engine_plugin_id", b.engine},
                    {"collection_id", b.uuid.str()},
                    {"creation_settings", b.creation_settings},
                    {"retrieval_settings", b.retrieval_settings},
                    {"knowledge_engine", JsonObject{{"plugin_id", b.engine},
                                                    {"name", services::BuiltinEngineName()},
                                                    {"capabilities", JsonArray{"doc_ingestion"}}}}};
}

JsonObject EncodeFile(const domain::KnowledgeFile& f) {
  return JsonObject{{"uuid", f.uuid.str()},
                    {"kb_id", f.base.str()},
                    {"file_name", f.file_name},
                    {"extension", f.extension},
                    {"status", domain::FileStatusName(f.status)},
                    {"error", f.error},
                    {"size", f.size_bytes},
                    {"chunk_count", f.chunk_count},
                    {"task_id", f.task_id},
                    {"created_at", util::FormatRfc3339(f.created_at)},
                    {"updated_at", util::FormatRfc3339(f.updated_at)}};
}

// LangBot's retrieval entry: text content, where it came from, and a distance (lower is closer);
// our score (higher is better) and its two parts are added.
JsonObject EncodeHit(const services::RetrievalHit& h) {
  const auto& p = h.passage;
  return JsonObject{{"id", std::to_string(p.returned_id)},
                    {"content", JsonArray{JsonObject{{"type", "text"}, {"text", p.text}}}},
                    {"metadata", JsonObject{{"file_id", p.file.str()},
                                            {"document_name", p.file_name},
                                            {"chunk_id", p.chunk_id},
                                            {"chunk_index", p.ordinal},
                                            {"text", p.text},
                                            {"vector_score", h.score.vector_score},
                                            {"keyword_score", h.score.keyword_score}}},
                    {"score", h.score.score},
                    {"distance", 1.0 - h.score.score}};
}

Response NotFoundOr(const Request& req, const util::Error& e, std::string_view what) {
  if (e.code == ErrorCode::kNotFound) {
    return Fail(req, util::Error{ErrorCode::kNotFound, std::string(what) + " not found"});
  }
  return Fail(req, e);
}

}  // namespace

void RegisterKnowledgeRoutes(Router& router, ApiContext& ctx) {
  if (!ctx.knowledge) return;
  services::KnowledgeService& kb = *ctx.knowledge;

  router.Add({"GET", "/api/v1/knowledge/bases", AuthClass::kEither, [&kb](Request& req) {
                auto bases = kb.ListBases();
                if (!bases) return Fail(req, bases.error());
                JsonArray out;
                for (const auto& b : *bases) out.push_back(EncodeBase(b));
                return JsonOk(JsonObject{{"bases", std::move(out)}});
              }});
  router.Add({"POST", "/api/v1/knowledge/bases", AuthClass::kEither, [&kb](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                auto id = kb.CreateBase(body->object());
                if (!id) return Fail(req, id.error());
                return JsonOk(JsonObject{{"uuid", id->str()}});
              }});
  router.Add({"GET", "/api/v1/knowledge/bases/{uuid}", AuthClass::kEither, [&kb](Request& req) {
                auto base = kb.GetBase(req.PathParam("uuid"));
                if (!base) return NotFoundOr(req, base.error(), "knowledge base");
                return JsonOk(JsonObject{{"base", EncodeBase(*base)}});
              }});
  router.Add({"PUT", "/api/v1/knowledge/bases/{uuid}", AuthClass::kEither, [&kb](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                auto task = kb.UpdateBase(req.PathParam("uuid"), body->object());
                if (!task) return NotFoundOr(req, task.error(), "knowledge base");
                JsonObject data{{"uuid", std::string(req.PathParam("uuid"))}};
                if (*task) data["task_id"] = **task;
                return JsonOk(data);
              }});
  router.Add({"DELETE", "/api/v1/knowledge/bases/{uuid}", AuthClass::kEither, [&kb](Request& req) {
                auto r = kb.DeleteBase(req.PathParam("uuid"));
                if (!r) return NotFoundOr(req, r.error(), "knowledge base");
                return JsonOk(JsonObject{});
              }});
  router.Add(
      {"GET", "/api/v1/knowledge/bases/{uuid}/files", AuthClass::kEither, [&kb](Request& req) {
         auto files = kb.ListFiles(req.PathParam("uuid"));
         if (!files) return NotFoundOr(req, files.error(), "knowledge base");
         JsonArray out;
         for (const auto& f : *files) out.push_back(EncodeFile(f));
         return JsonOk(JsonObject{{"files", std::move(out)}});
       }});
  router.Add(
      {"POST", "/api/v1/knowledge/bases/{uuid}/files", AuthClass::kEither, [&kb](Request& req) {
         auto body = FieldReader::Parse(req.body);
         if (!body) return Fail(req, body.error());
         auto file_id = body->OptionalString("file_id");
         auto parser = body->OptionalString("parser_plugin_id");
         if (auto e = body->error()) return Fail(req, *e);
         if (!file_id || file_id->empty()) {
           return Fail(req, {ErrorCode::kInvalidArgument, "File ID is required"});
         }
         auto task = kb.AddFile(req.PathParam("uuid"), *file_id, parser.value_or(""));
         if (!task) return Fail(req, task.error());
         return JsonOk(JsonObject{{"task_id", *task}});
       }});
  router.Add({"DELETE", "/api/v1/knowledge/bases/{uuid}/files/{file_id}", AuthClass::kEither,
              [&kb](Request& req) {
                auto r = kb.DeleteFile(req.PathParam("uuid"), req.PathParam("file_id"));
                if (!r) return Fail(req, r.error());
                return JsonOk(JsonObject{});
              }});
  router.Add(
      {"POST", "/api/v1/knowledge/bases/{uuid}/retrieve", AuthClass::kEither, [&kb](Request& req) {
         auto body = FieldReader::Parse(req.body);
         if (!body) return Fail(req, body.error());
         auto query = body->OptionalString("query");
         auto settings = body->OptionalObject("retrieval_settings");
         if (auto e = body->error()) return Fail(req, *e);
         if (!query || query->find_first_not_of(" \t\r\n") == std::string::npos) {
           return Fail(req, {ErrorCode::kInvalidArgument, "Query is required and cannot be empty"});
         }
         auto hits = kb.Retrieve(req.PathParam("uuid"), *query, settings.value_or(JsonObject{}));
         if (!hits) return NotFoundOr(req, hits.error(), "knowledge base");
         JsonArray out;
         for (const auto& h : *hits) out.push_back(EncodeHit(h));
         return JsonOk(JsonObject{{"results", std::move(out)}});
       }});

  // The engine and parser catalogue: the built-in engine and parser only (knowledge-engine
  // plugins are not supported yet).
  router.Add({"GET", "/api/v1/knowledge/engines", AuthClass::kEither,
              [](Request&) {
                return JsonOk(JsonObject{{"engines", JsonArray{services::BuiltinEngineJson()}}});
              },
              Execution::kInline});
  auto schema_route = [](bool creation) {
    return [creation](Request& req) {
      // LangBot captures an "author/name" id with a path converter; ours is one segment each.
      const std::string id = fmt::format("{}/{}", req.PathParam("author"), req.PathParam("name"));
      if (!services::CanonicalEngineId(id)) return JsonOk(JsonObject{{"schema", JsonArray{}}});
      return JsonOk(JsonObject{
          {"schema", creation ? services::CreationSchema() : services::RetrievalSchema()}});
    };
  };
  router.Add({"GET", "/api/v1/knowledge/engines/{author}/{name}/creation-schema",
              AuthClass::kEither, schema_route(true), Execution::kInline});
  router.Add({"GET", "/api/v1/knowledge/engines/{author}/{name}/retrieval-schema",
              AuthClass::kEither, schema_route(false), Execution::kInline});
  router.Add({"GET", "/api/v1/knowledge/parsers", AuthClass::kEither,
              [](Request& req) {
                JsonObject parser = services::BuiltinParserJson();
                JsonArray parsers;
                const auto mime = req.Query("mime_type");
                bool supported = !mime || mime->empty();
                for (const auto& t : parser.at("supported_mime_types").as_array()) {
                  if (mime && t.as_string() == *mime) supported = true;
                }
                if (supported) parsers.push_back(std::move(parser));
                return JsonOk(JsonObject{{"parsers", std::move(parsers)}});
              },
              Execution::kInline});

  // LangBot 4.9's move of built-in knowledge bases to engine plugins. Ours never had that older
  // format, so there is never anything to migrate.
  router.Add({"GET", "/api/v1/knowledge/migration/status", AuthClass::kUserOnly,
              [](Request&) {
                return JsonOk(JsonObject{
                    {"needed", false}, {"internal_kb_count", 0}, {"external_kb_count", 0}});
              },
              Execution::kInline});
  for (const char* path :
       {"/api/v1/knowledge/migration/execute", "/api/v1/knowledge/migration/dismiss"}) {
    router.Add({"POST", path, AuthClass::kUserOnly,
                [](Request& req) {
                  return Fail(req, {ErrorCode::kInvalidArgument,
                                    "RAG migration is not needed: this server has no knowledge "
                                    "bases in LangBot's pre-4.9 format"});
                },
                Execution::kInline});
  }

  // Uploads.
  router.Add({"POST", "/api/v1/files/documents", AuthClass::kEither, [&kb](Request& req) {
                auto file = UploadedFile(req);
                if (!file) return Fail(req, file.error());
                auto key = kb.SaveDocument(file->filename, file->bytes);
                if (!key) return Fail(req, key.error());
                return JsonOk(JsonObject{{"file_id", *key}});
              }});
  router.Add({"POST", "/api/v1/files/images", AuthClass::kEither, [&kb](Request& req) {
                auto file = UploadedFile(req);
                if (!file) return Fail(req, file.error());
                auto key = kb.SaveImage(file->filename, file->bytes);
                if (!key) return Fail(req, key.error());
                return JsonOk(JsonObject{{"file_key", *key}});
              }});
  // Public, as in LangBot: image keys are unguessable and the console shows them in <img>.
  router.Add({"GET", "/api/v1/files/image/{key}", AuthClass::kNone, [&kb](Request& req) {
                auto image = kb.LoadImage(req.PathParam("key"));
                if (!image) return Response{404, "", "text/plain", {}};
                Response r;
                r.body = std::move(image->first);
                r.content_type = image->second;
                r.headers.emplace_back("X-Content-Type-Options", "nosniff");
                r.headers.emplace_back("Cache-Control", "private, max-age=86400");
                return r;
              }});
}

}  // namespace sb::http::api
