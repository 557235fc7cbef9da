#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "http/api/api.hpp"
#include "http/api/encoders.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"

namespace sb::http::api {

void RegisterPipelineRoutes(Router& router, ApiContext& ctx) {
  // The metadata never changes while the process runs: render it once.
  auto metadata = std::make_shared<const std::string>(JsonOk(ctx.pipelines.Metadata()).body);
  router.Add({"GET", "/api/v1/pipelines/_/metadata", AuthClass::kEither,
              [metadata](Request&) {
                Response r;
                r.body = *metadata;
                return r;
              },
              Execution::kInline});

  router.Add(
      {"GET", "/api/v1/pipelines", AuthClass::kEither, [&ctx](Request& req) {
         // LangBot's sorting: ?sort_by=created_at|updated_at|name&sort_order=DESC|ASC.
         const std::string sort_by(req.Query("sort_by").value_or("created_at"));
         const std::string order(req.Query("sort_order").value_or("DESC"));
         if (sort_by != "created_at" && sort_by != "updated_at" && sort_by != "name") {
           return Fail(req, {util::ErrorCode::kInvalidArgument,
                             "sort_by must be created_at, updated_at or name"});
         }
         if (order != "DESC" && order != "ASC" && order != "desc" && order != "asc") {
           return Fail(req, {util::ErrorCode::kInvalidArgument, "sort_order must be ASC or DESC"});
         }
         auto list = ctx.pipelines.List();
         if (!list) return Fail(req, list.error());
         const bool desc = order == "DESC" || order == "desc";
         std::stable_sort(list->begin(), list->end(), [&](const auto& a, const auto& b) {
           if (sort_by == "name") return desc ? a.name > b.name : a.name < b.name;
           const auto& ta = sort_by == "updated_at" ? a.updated_at : a.created_at;
           const auto& tb = sort_by == "updated_at" ? b.updated_at : b.created_at;
           return desc ? ta > tb : ta < tb;
         });
         util::JsonArray out;
         for (const auto& p : *list) out.push_back(EncodePipeline(p));
         return JsonOk(util::JsonObject{{"pipelines", std::move(out)}});
       }});

  router.Add({"POST", "/api/v1/pipelines", AuthClass::kEither, [&ctx](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                services::PipelineDraft d;
                d.name = body->RequiredString("name");
                d.description = body->OptionalString("description").value_or("");
                d.emoji = body->OptionalString("emoji").value_or("");
                d.config = body->OptionalObject("config").value_or(util::JsonObject());
                if (auto e = body->error()) return Fail(req, *e);
                auto id = ctx.pipelines.Create(d);
                if (!id) return Fail(req, id.error());
                return JsonOk(util::JsonObject{{"uuid", id->str()}});
              }});

  router.Add({"GET", "/api/v1/pipelines/{pipeline_uuid}", AuthClass::kEither, [&ctx](Request& req) {
                auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
                if (!id) return Fail(req, id.error());
                auto p = ctx.pipelines.Get(*id);
                if (!p) return Fail(req, p.error());
                return JsonOk(util::JsonObject{{"pipeline", EncodePipeline(*p)}});
              }});

  router.Add({"PUT", "/api/v1/pipelines/{pipeline_uuid}", AuthClass::kEither, [&ctx](Request& req) {
                auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
                if (!id) return Fail(req, id.error());
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                services::PipelinePatch p;
                p.name = body->OptionalString("name");
                p.description = body->OptionalString("description");
                p.emoji = body->OptionalString("emoji");
                p.config = body->OptionalObject("config");
                p.extensions_preferences = body->OptionalObject("extensions_preferences");
                if (auto e = body->error()) return Fail(req, *e);
                auto r = ctx.pipelines.Update(*id, p);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});

  router.Add(
      {"DELETE", "/api/v1/pipelines/{pipeline_uuid}", AuthClass::kEither, [&ctx](Request& req) {
         auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
         if (!id) return Fail(req, id.error());
         auto r = ctx.pipelines.Delete(*id);
         if (!r) return Fail(req, r.error());
         return JsonOkNoData();
       }});

  router.Add(
      {"POST", "/api/v1/pipelines/{pipeline_uuid}/copy", AuthClass::kEither, [&ctx](Request& req) {
         auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
         if (!id) return Fail(req, id.error());
         auto copy = ctx.pipelines.Copy(*id);
         if (!copy) return Fail(req, copy.error());
         return JsonOk(util::JsonObject{{"uuid", copy->str()}});
       }});
}

void RegisterAllRoutes(Router& router, ApiContext& ctx) {
  RegisterSystemRoutes(router, ctx);
  RegisterUserRoutes(router, ctx);
  RegisterApiKeyRoutes(router, ctx);
  RegisterProviderRoutes(router, ctx);
  RegisterModelRoutes(router, ctx);
  RegisterBotRoutes(router, ctx);
  RegisterPipelineRoutes(router, ctx);
  RegisterDebugChatRoutes(router, ctx);
  RegisterPluginRoutes(router, ctx);
  RegisterKnowledgeRoutes(router, ctx);
  RegisterWebhookRoutes(router, ctx);
  RegisterMcpRoutes(router, ctx);
  RegisterPipelineExtensionRoutes(router, ctx);
  RegisterMonitoringRoutes(router, ctx);
}

}  // namespace sb::http::api
