#include <fmt/format.h>

#include "http/api/api.hpp"
#include "http/api/encoders.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"

namespace sb::http::api {
namespace {

using domain::ModelKind;

std::optional<int> ReadRanking(FieldReader& body) {
  auto ranking = body.OptionalInt("prefered_ranking");
  if (ranking && (*ranking < -1000000 || *ranking > 1000000)) {
    body.Set("prefered_ranking is out of range");
    return std::nullopt;
  }
  if (!ranking) return std::nullopt;
  return static_cast<int>(*ranking);
}

// LangBot's inline provider: {requester, base_url, api_keys, name?}.
std::optional<services::ProviderDraft> ReadInlineProvider(FieldReader& body) {
  auto object = body.OptionalObject("provider");
  if (!object) return std::nullopt;
  FieldReader inner(std::move(*object));
  services::ProviderDraft d;
  d.name = inner.OptionalString("name").value_or("");
  d.requester = inner.RequiredString("requester");
  d.base_url = inner.RequiredString("base_url");
  d.api_keys = inner.OptionalStringList("api_keys").value_or(std::vector<std::string>{});
  if (auto e = inner.error()) {
    body.Set("provider." + e->message);
    return std::nullopt;
  }
  return d;
}

// The model described in the body of a test of an unsaved model (path uuid `_`).
services::ModelUnderTest ReadModelUnderTest(FieldReader& body) {
  services::ModelUnderTest m;
  m.name = body.OptionalString("name").value_or("");
  m.provider_uuid = body.OptionalId<util::ProviderId>("provider_uuid");
  if (!m.provider_uuid) m.inline_provider = ReadInlineProvider(body);
  m.requester_config = body.OptionalObject("requester_config").value_or(util::JsonObject());
  m.extra_args = body.OptionalObject("extra_args").value_or(util::JsonObject());
  return m;
}

// POST .../{model_uuid}/test: a real call through the provider; 502/504 say what failed.
void RegisterTest(Router& router, ApiContext& ctx, ModelKind kind, const std::string& base) {
  Route route{"POST", base + "/{model_uuid}/test", AuthClass::kEither, nullptr};
  route.async_handler = [&ctx, kind](Request& req, Respond respond) {
    auto body = FieldReader::Parse(req.body, /*empty_ok=*/true);
    if (!body) return respond(Fail(req, body.error()));
    const bool llm = kind == ModelKind::kLlm;
    // LangBot's defaults: the prompt or text "Hello" when none (or an empty one) is given.
    std::string input = body->OptionalString(llm ? "prompt" : "text").value_or("");
    if (input.empty()) input = "Hello";
    const bool draft = req.PathParam("model_uuid") == "_";
    services::ModelUnderTest model;
    std::optional<util::ModelId> id;
    if (draft) {
      model = ReadModelUnderTest(*body);
    } else {
      auto parsed = PathId<util::ModelId>(req, "model_uuid");
      if (!parsed) return respond(Fail(req, parsed.error()));
      id = *parsed;
    }
    if (auto e = body->error()) return respond(Fail(req, *e));
    const std::string request_id = req.request_id;
    if (llm) {
      auto done = [respond, request_id](util::Result<services::LlmTestResult> r) {
        if (!r) return respond(JsonError(r.error(), request_id));
        respond(JsonOk(util::JsonObject{
            {"latency_ms", r->latency_ms},
            {"reply", r->reply},
            {"usage", util::JsonObject{{"prompt_tokens", r->usage.prompt_tokens},
                                       {"completion_tokens", r->usage.completion_tokens},
                                       {"total_tokens", r->usage.total_tokens}}}}));
      };
      if (draft) return ctx.model_tests.TestLlmDraft(model, std::move(input), std::move(done));
      return ctx.model_tests.TestLlm(*id, std::move(input), std::move(done));
    }
    auto done = [respond, request_id](util::Result<services::EmbeddingTestResult> r) {
      if (!r) return respond(JsonError(r.error(), request_id));
      respond(
          JsonOk(util::JsonObject{{"latency_ms", r->latency_ms}, {"dimensions", r->dimensions}}));
    };
    if (draft) return ctx.model_tests.TestEmbeddingDraft(model, std::move(input), std::move(done));
    ctx.model_tests.TestEmbedding(*id, std::move(input), std::move(done));
  };
  router.Add(std::move(route));
}

void RegisterKind(Router& router, ApiContext& ctx, ModelKind kind, const std::string& base) {
  router.Add({"GET", base, AuthClass::kEither, [&ctx, kind](Request& req) {
                std::optional<util::ProviderId> provider;
                if (auto text = req.Query("provider_uuid"); text && !text->empty()) {
                  auto id = util::ProviderId::Parse(*text, "provider_uuid");
                  if (!id) return Fail(req, id.error());
                  provider = *id;
                }
                auto list = ctx.models.List(kind, provider);
                if (!list) return Fail(req, list.error());
                const bool secret = QueryFlag(req, "include_secret", true);
                util::JsonArray out;
                out.reserve(list->size());
                for (const auto& m : *list) out.push_back(EncodeModel(m, secret, false));
                return JsonOk(util::JsonObject{{"models", std::move(out)}});
              }});

  router.Add({"POST", base, AuthClass::kEither, [&ctx, kind](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                services::ModelDraft d;
                d.name = body->RequiredString("name");
                d.description = body->OptionalString("description").value_or("");
                d.provider_uuid = body->OptionalId<util::ProviderId>("provider_uuid");
                if (!d.provider_uuid) d.inline_provider = ReadInlineProvider(*body);
                d.requester_config = body->OptionalObject("requester_config");
                if (kind == ModelKind::kLlm) {
                  d.abilities =
                      body->OptionalStringList("abilities").value_or(std::vector<std::string>{});
                }
                d.extra_args = body->OptionalObject("extra_args").value_or(util::JsonObject());
                d.prefered_ranking = ReadRanking(*body).value_or(0);
                if (auto e = body->error()) return Fail(req, *e);
                auto id = ctx.models.Create(kind, d);
                if (!id) return Fail(req, id.error());
                return JsonOk(util::JsonObject{{"uuid", id->str()}});
              }});

  router.Add({"GET", base + "/{model_uuid}", AuthClass::kEither, [&ctx, kind](Request& req) {
                auto id = PathId<util::ModelId>(req, "model_uuid");
                if (!id) return Fail(req, id.error());
                auto m = ctx.models.Get(kind, *id);
                if (!m) return Fail(req, m.error());
                const bool secret = QueryFlag(req, "include_secret", true);
                return JsonOk(util::JsonObject{{"model", EncodeModel(*m, secret, true)}});
              }});

  router.Add({"PUT", base + "/{model_uuid}", AuthClass::kEither, [&ctx, kind](Request& req) {
                auto id = PathId<util::ModelId>(req, "model_uuid");
                if (!id) return Fail(req, id.error());
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                services::ModelPatch p;
                p.name = body->OptionalString("name");
                p.description = body->OptionalString("description");
                p.provider_uuid = body->OptionalId<util::ProviderId>("provider_uuid");
                p.requester_config = body->OptionalObject("requester_config");
                if (kind == ModelKind::kLlm) p.abilities = body->OptionalStringList("abilities");
                p.extra_args = body->OptionalObject("extra_args");
                p.prefered_ranking = ReadRanking(*body);
                if (auto e = body->error()) return Fail(req, *e);
                auto r = ctx.models.Update(kind, *id, p);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});

  router.Add({"DELETE", base + "/{model_uuid}", AuthClass::kEither, [&ctx, kind](Request& req) {
                auto id = PathId<util::ModelId>(req, "model_uuid");
                if (!id) return Fail(req, id.error());
                auto r = ctx.models.Delete(kind, *id);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});
}

}  // namespace

void RegisterModelRoutes(Router& router, ApiContext& ctx) {
  RegisterKind(router, ctx, ModelKind::kLlm, "/api/v1/provider/models/llm");
  RegisterKind(router, ctx, ModelKind::kEmbedding, "/api/v1/provider/models/embedding");
  RegisterTest(router, ctx, ModelKind::kLlm, "/api/v1/provider/models/llm");
  RegisterTest(router, ctx, ModelKind::kEmbedding, "/api/v1/provider/models/embedding");
}

}  // namespace sb::http::api
