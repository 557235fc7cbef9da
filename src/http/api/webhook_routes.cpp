// Outgoing webhooks, in LangBot's shape (/api/v1/webhooks, user token only as in LangBot), plus
// what LangBot does not have: the signing secret (whole once, at creation or rotation; masked
// after) and how the last push went.
#include <charconv>

#include "http/api/api.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"
#include "util/clock.hpp"

namespace sb::http::api {
namespace {

util::Result<std::int64_t> WebhookId(const Request& req) {
  const auto text = req.PathParam("webhook_id");
  std::int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id < 1) {
    return util::Fail(util::ErrorCode::kNotFound, "webhook not found");  // LangBot's <int:>
  }
  return id;
}

util::Json Time(const std::optional<util::TimePoint>& t) {
  return t ? util::Json(util::FormatRfc3339(*t)) : util::Json(nullptr);
}

util::JsonObject Encode(const domain::Webhook& w, bool whole_secret) {
  return util::JsonObject{{"id", w.id},
                          {"name", w.name},
                          {"url", w.url},
                          {"description", w.description},
                          {"enabled", w.enabled},
                          {"secret", whole_secret ? w.secret : services::MaskSecret(w.secret)},
                          {"created_at", util::FormatRfc3339(w.created_at)},
                          {"updated_at", util::FormatRfc3339(w.updated_at)},
                          {"last_delivery", util::JsonObject{{"status", w.last.status},
                                                             {"http_status", w.last.http_status},
                                                             {"error", w.last.error},
                                                             {"at", Time(w.last.at)},
                                                             {"deliveries", w.last.deliveries},
                                                             {"failures", w.last.failures}}}};
}

util::Result<services::WebhookFields> ReadFields(const Request& req, bool creating) {
  auto body = FieldReader::Parse(req.body);
  if (!body) return tl::make_unexpected(body.error());
  services::WebhookFields f;
  f.name = body->OptionalString("name");
  f.url = body->OptionalString("url");
  f.description = body->OptionalString("description");
  f.enabled = body->OptionalBool("enabled");
  if (!creating) f.rotate_secret = body->OptionalBool("rotate_secret").value_or(false);
  if (auto e = body->error()) return tl::make_unexpected(*e);
  if (creating && !f.enabled) f.enabled = true;
  return f;
}

}  // namespace

void RegisterWebhookRoutes(Router& router, ApiContext& ctx) {
  if (ctx.webhooks == nullptr) return;
  services::WebhookService& hooks = *ctx.webhooks;

  router.Add({"GET", "/api/v1/webhooks", AuthClass::kUserOnly, [&hooks](Request& req) {
                auto all = hooks.List();
                if (!all) return Fail(req, all.error());
                util::JsonArray out;
                for (const auto& w : *all) out.push_back(Encode(w, false));
                return JsonOk(util::JsonObject{{"webhooks", std::move(out)}});
              }});

  router.Add({"POST", "/api/v1/webhooks", AuthClass::kUserOnly, [&hooks](Request& req) {
                auto fields = ReadFields(req, true);
                if (!fields) return Fail(req, fields.error());
                auto created = hooks.Create(*fields);
                if (!created) return Fail(req, created.error());
                return JsonOk(util::JsonObject{{"webhook", Encode(*created, true)}});
              }});

  router.Add({"GET", "/api/v1/webhooks/{webhook_id}", AuthClass::kUserOnly, [&hooks](Request& req) {
                auto id = WebhookId(req);
                if (!id) return Fail(req, id.error());
                auto w = hooks.Get(*id);
                if (!w) return Fail(req, w.error());
                return JsonOk(util::JsonObject{{"webhook", Encode(*w, false)}});
              }});

  router.Add(
      {"PUT", "/api/v1/webhooks/{webhook_id}", AuthClass::kUserOnly, [&hooks](Request& req) {
         auto id = WebhookId(req);
         if (!id) return Fail(req, id.error());
         auto fields = ReadFields(req, false);
         if (!fields) return Fail(req, fields.error());
         auto updated = hooks.Update(*id, *fields);
         if (!updated) return Fail(req, updated.error());
         return JsonOk(util::JsonObject{{"webhook", Encode(*updated, fields->rotate_secret)}});
       }});

  router.Add(
      {"DELETE", "/api/v1/webhooks/{webhook_id}", AuthClass::kUserOnly, [&hooks](Request& req) {
         auto id = WebhookId(req);
         if (!id) return Fail(req, id.error());
         if (auto r = hooks.Delete(*id); !r) return Fail(req, r.error());
         return JsonOkNoData();
       }});
}

}  // namespace sb::http::api
