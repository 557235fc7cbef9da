// /api/v1/mcp/servers in LangBot 4.9.5's shapes: servers addressed by name, extra_args with its
// secrets masked, runtime_info null unless a session runs.
#include <fmt/format.h>

#include "http/api/api.hpp"
#include "http/api/encoders.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"
#include "services/mcp_service.hpp"

namespace sb::http::api {
namespace {

util::Json EncodeRuntime(const std::optional<domain::McpRuntimeInfo>& info) {
  if (!info) return nullptr;
  util::JsonArray tools;
  tools.reserve(info->tools.size());
  for (const auto& t : info->tools) {
    tools.push_back(util::JsonObject{{"name", t.name}, {"description", t.description}});
  }
  return util::JsonObject{
      {"status", info->status},
      {"error_message",
       info->error_message.empty() ? util::Json(nullptr) : util::Json(info->error_message)},
      {"tool_count", static_cast<std::int64_t>(info->tools.size())},
      {"tools", std::move(tools)},
      {"restarts", info->restarts}};
}

}  // namespace

util::JsonObject EncodeMcpServer(const services::McpServerView& v) {
  const auto& s = v.server;
  return util::JsonObject{{"uuid", s.uuid},
                          {"name", s.name},
                          {"enable", s.enable},
                          {"mode", s.mode},
                          {"extra_args", services::MaskMcpSecrets(s.extra_args)},
                          {"runtime_info", EncodeRuntime(v.runtime)},
                          {"created_at", util::FormatRfc3339(s.created_at)},
                          {"updated_at", util::FormatRfc3339(s.updated_at)}};
}

namespace {

// The body of a create or a test: the console's whole form.
services::McpServerDraft ReadDraft(FieldReader& body) {
  services::McpServerDraft d;
  d.name = body.OptionalString("name").value_or("");
  d.enable = body.OptionalBool("enable").value_or(true);
  d.mode = body.RequiredString("mode");
  d.extra_args = body.OptionalObject("extra_args").value_or(util::JsonObject{});
  return d;
}

}  // namespace

void RegisterMcpRoutes(Router& router, ApiContext& ctx) {
  if (!ctx.mcp) return;
  services::McpService& mcp = *ctx.mcp;

  router.Add({"GET", "/api/v1/mcp/servers", AuthClass::kEither, [&mcp](Request& req) {
                auto list = mcp.List();
                if (!list) return Fail(req, list.error());
                util::JsonArray out;
                out.reserve(list->size());
                for (const auto& v : *list) out.push_back(EncodeMcpServer(v));
                return JsonOk(util::JsonObject{{"servers", std::move(out)}});
              }});

  router.Add({"POST", "/api/v1/mcp/servers", AuthClass::kEither, [&mcp](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                auto draft = ReadDraft(*body);
                if (auto e = body->error()) return Fail(req, *e);
                auto uuid = mcp.Create(draft);
                if (!uuid) return Fail(req, uuid.error());
                return JsonOk(util::JsonObject{{"uuid", *uuid}});
              }});

  router.Add({"GET", "/api/v1/mcp/servers/{server_name}", AuthClass::kEither, [&mcp](Request& req) {
                auto v = mcp.Get(std::string(req.PathParam("server_name")));
                if (!v) return Fail(req, v.error());
                return JsonOk(util::JsonObject{{"server", EncodeMcpServer(*v)}});
              }});

  router.Add({"PUT", "/api/v1/mcp/servers/{server_name}", AuthClass::kEither, [&mcp](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                services::McpServerPatch patch;
                patch.name = body->OptionalString("name");
                patch.enable = body->OptionalBool("enable");
                patch.mode = body->OptionalString("mode");
                patch.extra_args = body->OptionalObject("extra_args");
                if (auto e = body->error()) return Fail(req, *e);
                auto r = mcp.Update(std::string(req.PathParam("server_name")), patch);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});

  // LangBot's console tests its unsaved form as server "_" with the whole form as the body; a
  // body without a mode tests the stored server of that name.
  router.Add(
      {"POST", "/api/v1/mcp/servers/{server_name}/test", AuthClass::kEither, [&mcp](Request& req) {
         auto body = FieldReader::Parse(req.body, /*empty_ok=*/true);
         if (!body) return Fail(req, body.error());
         services::McpServerDraft d;
         d.name = body->OptionalString("name").value_or("");
         d.mode = body->OptionalString("mode").value_or("");
         d.extra_args = body->OptionalObject("extra_args").value_or(util::JsonObject{});
         if (auto e = body->error()) return Fail(req, *e);
         auto task = mcp.Test(std::string(req.PathParam("server_name")), d);
         if (!task) return Fail(req, task.error());
         return JsonOk(util::JsonObject{{"task_id", *task}});
       }});

  router.Add(
      {"DELETE", "/api/v1/mcp/servers/{server_name}", AuthClass::kEither, [&mcp](Request& req) {
         auto r = mcp.Delete(std::string(req.PathParam("server_name")));
         if (!r) return Fail(req, r.error());
         return JsonOkNoData();
       }});
}

}  // namespace sb::http::api
