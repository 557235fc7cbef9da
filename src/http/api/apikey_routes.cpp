#include <charconv>

#include "http/api/api.hpp"
#include "http/api/encoders.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"

namespace sb::http::api {
namespace {

util::Result<std::int64_t> KeyId(const Request& req) {
  const auto text = req.PathParam("key_id");
  std::int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id < 1) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "key id must be a positive integer");
  }
  return id;
}

}  // namespace

void RegisterApiKeyRoutes(Router& router, ApiContext& ctx) {
  router.Add({"GET", "/api/v1/apikeys", AuthClass::kUserOnly, [&ctx](Request& req) {
                auto keys = ctx.auth.ListApiKeys();
                if (!keys) return Fail(req, keys.error());
                util::JsonArray out;
                for (const auto& k : *keys) out.push_back(EncodeApiKey(k));
                return JsonOk(util::JsonObject{{"keys", std::move(out)}});
              }});

  router.Add({"POST", "/api/v1/apikeys", AuthClass::kUserOnly, [&ctx](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                auto name = body->RequiredString("name");
                auto description = body->OptionalString("description");
                if (auto e = body->error()) return Fail(req, *e);
                auto created = ctx.auth.CreateApiKey(name, description.value_or(""));
                if (!created) return Fail(req, created.error());
                auto key = EncodeApiKey(created->record);
                key["key"] = created->key;  // the only time the whole key is shown
                return JsonOk(util::JsonObject{{"key", std::move(key)}});
              }});

  router.Add({"GET", "/api/v1/apikeys/{key_id}", AuthClass::kUserOnly, [&ctx](Request& req) {
                auto id = KeyId(req);
                if (!id) return Fail(req, id.error());
                auto key = ctx.auth.GetApiKey(*id);
                if (!key) return Fail(req, key.error());
                return JsonOk(util::JsonObject{{"key", EncodeApiKey(*key)}});
              }});

  router.Add({"PUT", "/api/v1/apikeys/{key_id}", AuthClass::kUserOnly, [&ctx](Request& req) {
                auto id = KeyId(req);
                if (!id) return Fail(req, id.error());
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                auto name = body->OptionalString("name");
                auto description = body->OptionalString("description");
                if (auto e = body->error()) return Fail(req, *e);
                auto r = ctx.auth.UpdateApiKey(*id, name, description);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});

  router.Add({"DELETE", "/api/v1/apikeys/{key_id}", AuthClass::kUserOnly, [&ctx](Request& req) {
                auto id = KeyId(req);
                if (!id) return Fail(req, id.error());
                auto r = ctx.auth.DeleteApiKey(*id);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});
}

}  // namespace sb::http::api
