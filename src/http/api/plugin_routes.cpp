// /api/v1/plugins: installed plugins, installs from the marketplace or a package, upgrade and
// delete (background tasks), config, enable, readme, icon, and the marketplace listing.
#include <charconv>

#include "http/api/api.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"
#include "http/console.hpp"
#include "http/multipart.hpp"

namespace sb::http::api {
namespace {

using util::ErrorCode;

}  // namespace

util::Json EncodePlugin(const domain::PluginView& view) {
  const auto& p = view.plugin;
  util::JsonObject manifest = p.manifest;
  manifest.erase("command");  // how it runs is the server's business
  return util::JsonObject{{"author", p.author},
                          {"name", p.name},
                          {"plugin_id", p.author + "/" + p.name},
                          {"version", p.version},
                          {"enabled", p.enabled},
                          {"priority", p.priority},
                          {"install_source", p.install_source},
                          {"label", manifest["label"]},
                          {"description", manifest["description"]},
                          {"manifest", manifest},
                          {"config", p.config},
                          {"status", view.status},
                          {"error", view.error},
                          {"restarts", view.restarts},
                          {"recent_crashes", view.recent_crashes},
                          {"sandbox", util::JsonObject{{"status", view.sandbox},
                                                       {"network_requested", manifest["network"]},
                                                       {"allow_network", p.allow_network}}},
                          {"capabilities", view.capabilities},
                          {"created_at", util::FormatRfc3339(p.created_at)},
                          {"updated_at", util::FormatRfc3339(p.updated_at)}};
}

namespace {

domain::PluginKey KeyOf(const Request& req) {
  return {std::string(req.PathParam("author")), std::string(req.PathParam("name"))};
}

Response TaskId(const Request& req, const util::Result<std::int64_t>& task) {
  if (!task) return Fail(req, task.error());
  return JsonOk(util::JsonObject{{"task_id", *task}});
}

// The package of a multipart/form-data upload, or the raw body when it is not multipart.
util::Result<std::string> PackageOf(const Request& req) {
  if (req.Header("content-type").find("multipart/form-data") == std::string_view::npos) {
    if (req.body.empty()) return util::Fail(ErrorCode::kInvalidArgument, "the package is missing");
    return req.body;
  }
  auto file = UploadedFile(req);
  if (!file) return tl::unexpected(file.error());
  return std::string(file->bytes);
}

// A plugin's asset as a static file. Browsers neither guess its type (nosniff) nor run a script
// in it: an HTML or SVG document gets a policy with no script source and a sandbox, and script
// files are served as text, so a package cannot put code on this origin.
Response AssetResponse(std::string bytes, std::string_view name) {
  Response r;
  r.body = std::move(bytes);
  std::string_view type = ConsoleContentType(name);
  if (type.starts_with("text/javascript")) type = "text/plain; charset=utf-8";
  r.content_type = std::string(type);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox");
  // The URL does not name the version, so an upgrade shows within the hour.
  r.headers.emplace_back("Cache-Control", "public, max-age=3600");
  return r;
}

util::Json EncodeRelease(const domain::GithubRelease& r) {
  return util::JsonObject{
      {"id", r.id},
      {"tag_name", r.tag_name},
      {"name", r.name ? util::Json(*r.name) : util::Json(nullptr)},
      {"published_at", r.published_at ? util::Json(*r.published_at) : util::Json(nullptr)},
      {"prerelease", r.prerelease},
      {"draft", r.draft}};
}

util::Json EncodeAsset(const domain::GithubAsset& a) {
  return util::JsonObject{{"id", a.id},
                          {"name", a.name},
                          {"size", a.size},
                          {"download_url", a.download_url},
                          {"content_type", a.content_type}};
}

// LangBot's console sends release_id as a number; a numeric string is taken too.
std::optional<std::int64_t> ReleaseIdOf(const util::JsonObject& body) {
  const auto* v = body.if_contains("release_id");
  if (!v) return std::nullopt;
  if (v->is_int64() && v->as_int64() > 0) return v->as_int64();
  if (v->is_uint64() && v->as_uint64() <= (1ull << 62)) {
    return static_cast<std::int64_t>(v->as_uint64());
  }
  if (v->is_string()) {
    const std::string_view s = v->as_string();
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec == std::errc() && end == s.data() + s.size() && n > 0) return n;
  }
  return std::nullopt;
}

int IntQuery(const Request& req, std::string_view name, int fallback, bool& bad) {
  auto v = req.Query(name);
  if (!v || v->empty()) return fallback;
  int n = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size()) bad = true;
  return n;
}

}  // namespace

void RegisterPluginRoutes(Router& router, ApiContext& ctx) {
  if (!ctx.plugins) return;
  domain::PluginManager& plugins = *ctx.plugins;

  router.Add({"GET", "/api/v1/plugins", AuthClass::kEither, [&plugins](Request& req) {
                auto list = plugins.List();
                if (!list) return Fail(req, list.error());
                util::JsonArray out;
                for (const auto& p : *list) out.push_back(EncodePlugin(p));
                return JsonOk(util::JsonObject{{"plugins", std::move(out)}});
              }});

  // Remote plugin debugging (LangBot's runtime accepts a plugin process connecting from a
  // developer's machine) does not exist here: the same shape, empty, saying so.
  router.Add({"GET", "/api/v1/plugins/debug-info", AuthClass::kEither, [](Request&) {
                return JsonOk(util::JsonObject{
                    {"debug_url", ""},
                    {"plugin_debug_key", ""},
                    {"supported", false},
                    {"message",
                     "remote plugin debugging is not supported: run the plugin from a local "
                     "package (docs/plugins.md)"}});
              }});

  router.Add(
      {"POST", "/api/v1/plugins/install/marketplace", AuthClass::kEither, [&plugins](Request& req) {
         auto body = FieldReader::Parse(req.body);
         if (!body) return Fail(req, body.error());
         domain::PluginKey key;
         // The seed's "author/name", or LangBot's separate fields.
         if (auto id = body->OptionalString("plugin_id")) {
           const auto slash = id->find('/');
           if (slash == std::string::npos || id->find('/', slash + 1) != std::string::npos) {
             body->Set("plugin_id must look like <author>/<plugin_name>");
           } else {
             key = {id->substr(0, slash), id->substr(slash + 1)};
           }
         } else if (body->Has("plugin_author") || body->Has("plugin_name")) {
           key.author = body->RequiredString("plugin_author");
           key.name = body->RequiredString("plugin_name");
         } else {
           body->Set("plugin_id is required");
         }
         const std::string version = body->OptionalString("plugin_version").value_or("");
         if (auto e = body->error()) return Fail(req, *e);
         return TaskId(req, plugins.InstallFromMarketplace(key, version));
       }});

  router.Add(
      {"POST", "/api/v1/plugins/github/releases", AuthClass::kEither, [&plugins](Request& req) {
         auto body = FieldReader::Parse(req.body);
         if (!body) return Fail(req, body.error());
         const std::string url = body->OptionalString("repo_url").value_or("");
         if (auto e = body->error()) return Fail(req, *e);
         auto list = plugins.GithubReleases(url);
         if (!list) return Fail(req, list.error());
         util::JsonArray releases;
         for (const auto& r : list->releases) releases.push_back(EncodeRelease(r));
         return JsonOk(util::JsonObject{
             {"releases", std::move(releases)}, {"owner", list->owner}, {"repo", list->repo}});
       }});

  router.Add({"POST", "/api/v1/plugins/github/release-assets", AuthClass::kEither,
              [&plugins](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                const std::string owner = body->OptionalString("owner").value_or("");
                const std::string repo = body->OptionalString("repo").value_or("");
                const auto release_id = ReleaseIdOf(body->object());
                if (auto e = body->error()) return Fail(req, *e);
                if (owner.empty() || repo.empty() || !release_id) {
                  return Fail(req, {ErrorCode::kInvalidArgument,
                                    "Missing required parameters: owner, repo and a positive "
                                    "release_id"});
                }
                auto assets = plugins.GithubReleaseAssets(owner, repo, *release_id);
                if (!assets) return Fail(req, assets.error());
                util::JsonArray out;
                for (const auto& a : *assets) out.push_back(EncodeAsset(a));
                return JsonOk(util::JsonObject{{"assets", std::move(out)}});
              }});

  router.Add(
      {"POST", "/api/v1/plugins/install/github", AuthClass::kEither, [&plugins](Request& req) {
         auto body = FieldReader::Parse(req.body);
         if (!body) return Fail(req, body.error());
         domain::GithubInstall install;
         install.asset_url = body->OptionalString("asset_url").value_or("");
         install.owner = body->OptionalString("owner").value_or("");
         install.repo = body->OptionalString("repo").value_or("");
         install.release_tag = body->OptionalString("release_tag").value_or("");
         if (auto e = body->error()) return Fail(req, *e);
         if (install.asset_url.empty()) {
           return Fail(req, {ErrorCode::kInvalidArgument, "Missing asset_url parameter"});
         }
         return TaskId(req, plugins.InstallFromGithub(install));
       }});

  router.Add(
      {"POST", "/api/v1/plugins/install/local", AuthClass::kEither, [&plugins](Request& req) {
         auto package = PackageOf(req);
         if (!package) return Fail(req, package.error());
         return TaskId(req, plugins.InstallLocal(std::move(*package)));
       }});

  router.Add(
      {"GET", "/api/v1/plugins/marketplace", AuthClass::kEither, [&plugins](Request& req) {
         bool bad = false;
         const int page = IntQuery(req, "page", 1, bad);
         const int page_size = IntQuery(req, "page_size", 20, bad);
         if (bad) {
           return Fail(req, {ErrorCode::kInvalidArgument, "page and page_size must be integers"});
         }
         auto list = plugins.MarketplaceList(page, page_size);
         if (!list) return Fail(req, list.error());
         return JsonOk(*list);
       }});

  router.Add(
      {"GET", "/api/v1/plugins/{author}/{name}", AuthClass::kEither, [&plugins](Request& req) {
         auto view = plugins.Get(KeyOf(req));
         if (!view) return Fail(req, view.error());
         return JsonOk(util::JsonObject{{"plugin", EncodePlugin(*view)}});
       }});

  router.Add({"DELETE", "/api/v1/plugins/{author}/{name}", AuthClass::kEither,
              [&plugins](Request& req) { return TaskId(req, plugins.Delete(KeyOf(req))); }});

  router.Add({"POST", "/api/v1/plugins/{author}/{name}/upgrade", AuthClass::kEither,
              [&plugins](Request& req) { return TaskId(req, plugins.Upgrade(KeyOf(req))); }});

  router.Add({"GET", "/api/v1/plugins/{author}/{name}/config", AuthClass::kEither,
              [&plugins](Request& req) {
                auto config = plugins.Config(KeyOf(req));
                if (!config) return Fail(req, config.error());
                return JsonOk(util::JsonObject{{"config", std::move(*config)}});
              }});

  router.Add({"PUT", "/api/v1/plugins/{author}/{name}/config", AuthClass::kEither,
              [&plugins](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                // The seed sends the config itself; a {"config": {...}} wrapper is accepted too.
                util::JsonObject config = body->object();
                if (config.size() == 1 && config.contains("config") &&
                    config["config"].is_object()) {
                  util::JsonObject inner = config["config"].as_object();
                  config = std::move(inner);
                }
                if (auto set = plugins.SetConfig(KeyOf(req), config); !set) {
                  return Fail(req, set.error());
                }
                return JsonOkNoData();
              }});

  router.Add({"PUT", "/api/v1/plugins/{author}/{name}/enabled", AuthClass::kEither,
              [&plugins](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                auto enabled = body->OptionalBool("enabled");
                if (!enabled) body->Set("enabled is required");
                if (auto e = body->error()) return Fail(req, *e);
                if (auto set = plugins.SetEnabled(KeyOf(req), *enabled); !set) {
                  return Fail(req, set.error());
                }
                return JsonOkNoData();
              }});

  router.Add({"PUT", "/api/v1/plugins/{author}/{name}/sandbox", AuthClass::kEither,
              [&plugins](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                auto allow = body->OptionalBool("allow_network");
                if (!allow) body->Set("allow_network is required");
                if (auto e = body->error()) return Fail(req, *e);
                if (auto set = plugins.SetNetworkAllowed(KeyOf(req), *allow); !set) {
                  return Fail(req, set.error());
                }
                return JsonOkNoData();
              }});

  router.Add({"GET", "/api/v1/plugins/{author}/{name}/readme", AuthClass::kEither,
              [&plugins](Request& req) {
                auto readme = plugins.Readme(KeyOf(req));
                if (!readme) return Fail(req, readme.error());
                return JsonOk(util::JsonObject{{"readme", std::move(*readme)}});
              }});

  // Public, as in LangBot: the console shows it in an <img>, which sends no credential. An SVG
  // icon opened on its own runs no script (the asset headers' sandbox).
  router.Add(
      {"GET", "/api/v1/plugins/{author}/{name}/icon", AuthClass::kNone, [&plugins](Request& req) {
         auto icon = plugins.Icon(KeyOf(req));
         if (!icon) return Fail(req, icon.error());
         Response r = AssetResponse(std::move(icon->bytes), "icon");
         r.content_type = std::move(icon->content_type);
         return r;
       }});

  // Public, as in LangBot: the console puts these URLs in <img> tags of a plugin's readme.
  router.Add({"GET", "/api/v1/plugins/{author}/{name}/assets/{filepath}", AuthClass::kNone,
              [&plugins](Request& req) {
                const std::string name(req.PathParam("filepath"));
                auto asset = plugins.Asset(KeyOf(req), name);
                if (!asset) return Fail(req, asset.error());
                return AssetResponse(std::move(*asset), name);
              }});

  if (ctx.plugin_config_files) {
    services::PluginConfigFiles& files = *ctx.plugin_config_files;
    router.Add(
        {"POST", "/api/v1/plugins/config-files", AuthClass::kUserOnly, [&files](Request& req) {
           auto file = UploadedFile(req);
           if (!file) return Fail(req, {ErrorCode::kInvalidArgument, "file is required"});
           auto key = files.Save(file->filename, file->bytes);
           if (!key) return Fail(req, key.error());
           return JsonOk(util::JsonObject{{"file_key", std::move(*key)}});
         }});
    router.Add({"DELETE", "/api/v1/plugins/config-files/{file_key}", AuthClass::kUserOnly,
                [&files](Request& req) {
                  if (auto deleted = files.Delete(req.PathParam("file_key")); !deleted) {
                    return Fail(req, deleted.error());
                  }
                  return JsonOk(util::JsonObject{{"deleted", true}});
                }});
  }
}

}  // namespace sb::http::api
