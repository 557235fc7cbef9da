// GET/PUT /api/v1/pipelines/{uuid}/extensions in LangBot 4.9.5's shape: which plugins and MCP
// servers a pipeline uses, kept in its extensions_preferences ({enable_all_plugins, plugins:
// [{author, name}], enable_all_mcp_servers, mcp_servers: [name]}).
#include <fmt/format.h>

#include "http/api/api.hpp"
#include "http/api/encoders.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"

namespace sb::http::api {
namespace {

constexpr std::size_t kMaxBindings = 1000;

util::Json Field(const util::JsonObject& o, std::string_view key, util::Json fallback) {
  auto it = o.find(key);
  return it == o.end() ? fallback : it->value();
}

}  // namespace

void RegisterPipelineExtensionRoutes(Router& router, ApiContext& ctx) {
  router.Add({"GET", "/api/v1/pipelines/{pipeline_uuid}/extensions", AuthClass::kEither,
              [&ctx](Request& req) {
                auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
                if (!id) return Fail(req, id.error());
                auto p = ctx.pipelines.Get(*id);
                if (!p) return Fail(req, p.error());
                util::JsonArray plugins;
                if (ctx.plugins) {
                  auto list = ctx.plugins->List();
                  if (!list) return Fail(req, list.error());
                  for (const auto& v : *list) plugins.push_back(EncodePlugin(v));
                }
                util::JsonArray servers;
                if (ctx.mcp) {
                  auto list = ctx.mcp->List();
                  if (!list) return Fail(req, list.error());
                  for (const auto& v : *list) servers.push_back(EncodeMcpServer(v));
                }
                const auto& prefs = p->extensions_preferences;
                return JsonOk(util::JsonObject{
                    {"enable_all_plugins", Field(prefs, "enable_all_plugins", true)},
                    {"enable_all_mcp_servers", Field(prefs, "enable_all_mcp_servers", true)},
                    {"bound_plugins", Field(prefs, "plugins", util::JsonArray{})},
                    {"available_plugins", std::move(plugins)},
                    {"bound_mcp_servers", Field(prefs, "mcp_servers", util::JsonArray{})},
                    {"available_mcp_servers", std::move(servers)}});
              }});

  router.Add({"PUT", "/api/v1/pipelines/{pipeline_uuid}/extensions", AuthClass::kEither,
              [&ctx](Request& req) {
                auto id = PathId<util::PipelineId>(req, "pipeline_uuid");
                if (!id) return Fail(req, id.error());
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                const bool all_plugins = body->OptionalBool("enable_all_plugins").value_or(true);
                const bool all_mcp = body->OptionalBool("enable_all_mcp_servers").value_or(true);
                auto bound_plugins = body->OptionalArray("bound_plugins");
                auto bound_mcp = body->OptionalStringList("bound_mcp_servers");
                if (auto e = body->error()) return Fail(req, *e);
                util::JsonArray plugins;
                if (bound_plugins) {
                  for (const auto& b : *bound_plugins) {
                    const auto* o = b.if_object();
                    const util::Json* author = o ? o->if_contains("author") : nullptr;
                    const util::Json* name = o ? o->if_contains("name") : nullptr;
                    if (!author || !name || !author->is_string() || !name->is_string()) {
                      return Fail(req, {util::ErrorCode::kInvalidArgument,
                                        "bound_plugins must be a list of {author, name}"});
                    }
                    plugins.push_back(util::JsonObject{{"author", *author}, {"name", *name}});
                  }
                }
                if (plugins.size() > kMaxBindings ||
                    (bound_mcp && bound_mcp->size() > kMaxBindings)) {
                  return Fail(req, {util::ErrorCode::kInvalidArgument,
                                    fmt::format("at most {} bindings", kMaxBindings)});
                }
                auto p = ctx.pipelines.Get(*id);
                if (!p) return Fail(req, p.error());
                util::JsonObject prefs = p->extensions_preferences;
                prefs["enable_all_plugins"] = all_plugins;
                prefs["enable_all_mcp_servers"] = all_mcp;
                prefs["plugins"] = std::move(plugins);
                if (bound_mcp) {
                  util::JsonArray names;
                  for (auto& n : *bound_mcp) names.push_back(util::Json(n));
                  prefs["mcp_servers"] = std::move(names);
                }
                services::PipelinePatch patch;
                patch.extensions_preferences = std::move(prefs);
                auto r = ctx.pipelines.Update(*id, patch);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});
}

}  // namespace sb::http::api
