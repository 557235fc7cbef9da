#include <fmt/format.h>

#include <memory>

#include "http/api/api.hpp"
#include "http/api/encoders.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"
#include "http/api/monogram_icon.hpp"
#include "http/api/rendered_cache.hpp"

namespace sb::http::api {
namespace {

// `?model_type=llm|text-embedding|embedding` keeps requesters whose spec.support_type has it.
bool SupportsType(const util::JsonObject& descriptor, std::string_view type) {
  if (type == "embedding") type = "text-embedding";
  auto spec = descriptor.find("spec");
  if (spec == descriptor.end() || !spec->value().is_object()) return false;
  auto support = spec->value().as_object().find("support_type");
  if (support == spec->value().as_object().end() || !support->value().is_array()) return false;
  for (const auto& t : support->value().as_array()) {
    if (t.is_string() && t.as_string() == type) return true;
  }
  return false;
}

}  // namespace

void RegisterProviderRoutes(Router& router, ApiContext& ctx) {
  router.Add({"GET", "/api/v1/provider/requesters", AuthClass::kEither, [&ctx](Request& req) {
                const auto type = req.Query("model_type");
                util::JsonArray out;
                for (const auto& e : ctx.requesters.entries()) {
                  if (type && !type->empty() && !SupportsType(e.descriptor, *type)) continue;
                  out.push_back(e.descriptor);
                }
                return JsonOk(util::JsonObject{{"requesters", std::move(out)}});
              }});

  router.Add(
      {"GET", "/api/v1/provider/requesters/{name}", AuthClass::kEither, [&ctx](Request& req) {
         const auto* e = ctx.requesters.Find(req.PathParam("name"));
         if (!e) {
           return Fail(
               req, {util::ErrorCode::kNotFound, fmt::format("requester '{}' does not exist",
                                                             req.PathParam("name").substr(0, 64))});
         }
         return JsonOk(util::JsonObject{{"requester", e->descriptor}});
       }});
  // Public, as in LangBot: the console shows it in an <img>, which sends no credential.
  router.Add({"GET", "/api/v1/provider/requesters/{name}/icon", AuthClass::kNone,
              [&ctx](Request& req) {
                const auto* e = ctx.requesters.Find(req.PathParam("name"));
                if (!e) return Fail(req, {util::ErrorCode::kNotFound, "requester not found"});
                return MonogramResponse(*e);
              },
              Execution::kInline});

  // The hottest authenticated read: served from a rendering cached until providers or models
  // change, on the I/O thread.
  auto list_cache = std::make_shared<RenderedCache>();
  Route list{"GET", "/api/v1/provider/providers", AuthClass::kEither,
             [&ctx, list_cache](Request& req) {
               const bool secret = QueryFlag(req, "include_secret", true);
               const auto generation = ctx.providers.generation();
               auto list = ctx.providers.List();
               if (!list) return Fail(req, list.error());
               util::JsonArray out;
               out.reserve(list->size());
               for (const auto& p : *list) out.push_back(EncodeProvider(p, secret));
               Response r = JsonOk(util::JsonObject{{"providers", std::move(out)}});
               list_cache->Put(generation, secret ? 1 : 0, r.body);
               return r;
             }};
  list.fast_path = [&ctx, list_cache](Request& req) -> std::optional<Response> {
    auto body =
        list_cache->Get(ctx.providers.generation(), QueryFlag(req, "include_secret", true) ? 1 : 0);
    if (!body) return std::nullopt;
    Response r;
    r.body = std::move(*body);
    return r;
  };
  router.Add(std::move(list));

  router.Add({"POST", "/api/v1/provider/providers", AuthClass::kEither, [&ctx](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                services::ProviderDraft d;
                d.name = body->RequiredString("name");
                d.requester = body->RequiredString("requester");
                d.base_url = body->RequiredString("base_url");
                d.api_keys =
                    body->OptionalStringList("api_keys").value_or(std::vector<std::string>{});
                if (auto e = body->error()) return Fail(req, *e);
                auto id = ctx.providers.Create(d);
                if (!id) return Fail(req, id.error());
                return JsonOk(util::JsonObject{{"uuid", id->str()}});
              }});

  router.Add({"GET", "/api/v1/provider/providers/{provider_uuid}", AuthClass::kEither,
              [&ctx](Request& req) {
                auto id = PathId<util::ProviderId>(req, "provider_uuid");
                if (!id) return Fail(req, id.error());
                auto p = ctx.providers.Get(*id);
                if (!p) return Fail(req, p.error());
                const bool secret = QueryFlag(req, "include_secret", true);
                return JsonOk(util::JsonObject{{"provider", EncodeProvider(*p, secret)}});
              }});

  router.Add({"PUT", "/api/v1/provider/providers/{provider_uuid}", AuthClass::kEither,
              [&ctx](Request& req) {
                auto id = PathId<util::ProviderId>(req, "provider_uuid");
                if (!id) return Fail(req, id.error());
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                services::ProviderPatch patch;
                patch.name = body->OptionalString("name");
                patch.requester = body->OptionalString("requester");
                patch.base_url = body->OptionalString("base_url");
                patch.api_keys = body->OptionalStringList("api_keys");
                if (auto e = body->error()) return Fail(req, *e);
                auto r = ctx.providers.Update(*id, patch);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});

  router.Add({"DELETE", "/api/v1/provider/providers/{provider_uuid}", AuthClass::kEither,
              [&ctx](Request& req) {
                auto id = PathId<util::ProviderId>(req, "provider_uuid");
                if (!id) return Fail(req, id.error());
                auto r = ctx.providers.Delete(*id);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});
}

}  // namespace sb::http::api
