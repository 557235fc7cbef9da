#include <fmt/format.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <memory>
#include <mutex>

#include "http/api/api.hpp"
#include "http/api/encoders.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"

namespace sb::http::api {
namespace {

// `GET /system/info` is the one route every console load and health probe hits: the rendered
// body is cached and rebuilt only when the system service reports a change.
class SystemInfoCache {
 public:
  SystemInfoCache(services::SystemService& system, const ApiOptions& options)
      : system_(system), options_(options) {}

  std::shared_ptr<const std::string> Body() {
    const auto generation = system_.generation();
    const auto owned = options_.owned_generation ? options_.owned_generation() : 0;
    {
      std::lock_guard lock(mu_);
      if (body_ && generation_ == generation && owned_ == owned) return body_;
    }
    util::JsonObject info = EncodeSystemInfo(system_.Info());
    info["instance_id"] = options_.instance_id;
    util::JsonArray bots;
    if (options_.owned_bots) {
      for (auto& id : options_.owned_bots()) bots.emplace_back(std::move(id));
    }
    info["owned_bots"] = std::move(bots);
    auto body = std::make_shared<const std::string>(JsonOk(std::move(info)).body);
    std::lock_guard lock(mu_);
    body_ = body;
    generation_ = generation;
    owned_ = owned;
    return body;
  }

 private:
  services::SystemService& system_;
  const ApiOptions& options_;
  std::mutex mu_;
  std::shared_ptr<const std::string> body_;  // guarded by mu_
  std::uint64_t generation_ = 0;             // guarded by mu_
  std::uint64_t owned_ = 0;                  // guarded by mu_
};

}  // namespace

void RegisterSystemRoutes(Router& router, ApiContext& ctx) {
  auto cache = std::make_shared<SystemInfoCache>(ctx.system, ctx.options);
  router.Add({"GET", "/api/v1/system/info", AuthClass::kNone,
              [cache](Request&) {
                Response r;
                r.body = *cache->Body();
                return r;
              },
              Execution::kInline});

  // LangBot's console checks this before showing plugins: our plugin system's real state.
  router.Add({"GET", "/api/v1/system/status/plugin-system", AuthClass::kUserOnly, [&ctx](Request&) {
                domain::PluginSystemStatus status;
                if (ctx.plugins) {
                  status = ctx.plugins->SystemStatus();
                } else {
                  status.enabled = false;
                  status.error = "plugins are not available in this process";
                }
                return JsonOk(util::JsonObject{{"is_enable", status.enabled},
                                               {"is_connected", status.connected},
                                               {"plugin_connector_error", status.error}});
              }});

  // LangBot's console asks for a pending user survey on every visit. This server runs none: the
  // answer is always "no survey", and answering one is refused.
  router.Add({"GET", "/api/v1/survey/pending", AuthClass::kUserOnly,
              [](Request&) {
                return JsonOk(util::JsonObject{{"survey", nullptr}});
              },
              Execution::kInline});
  for (const char* path : {"/api/v1/survey/respond", "/api/v1/survey/dismiss"}) {
    router.Add({"POST", path, AuthClass::kUserOnly,
                [](Request& req) {
                  return Fail(req, {util::ErrorCode::kInvalidArgument,
                                    "Survey not available: this server runs no surveys"});
                },
                Execution::kInline});
  }

  router.Add({"POST", "/api/v1/system/wizard/completed", AuthClass::kEither, [&ctx](Request& req) {
                auto body = FieldReader::Parse(req.body, /*empty_ok=*/true);
                if (!body) return Fail(req, body.error());
                auto status = body->OptionalString("status");
                if (auto e = body->error()) return Fail(req, *e);
                auto r = ctx.system.SetWizardStatus(status.value_or("completed"));
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});

  router.Add({"PUT", "/api/v1/system/wizard/progress", AuthClass::kEither, [&ctx](Request& req) {
                auto parsed = util::ParseJson(req.body);
                if (!parsed) return Fail(req, parsed.error());
                // LangBot sends {progress: {...}}; a bare object is the progress itself.
                util::Json progress = *parsed;
                if (parsed->is_object() && parsed->as_object().contains("progress")) {
                  progress = parsed->as_object().at("progress");
                }
                auto r = ctx.system.SetWizardProgress(progress);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});

  router.Add({"GET", "/api/v1/system/about", AuthClass::kEither,
              [&ctx](Request&) {
                const auto& facts = ctx.options.instance;
                const auto info = ctx.system.Info();
                const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
                return JsonOk(util::JsonObject{
                    {"version", info.version},
                    {"api_version", "4.9.5"},
                    {"data_dir", facts.data_dir},
                    {"config_file", facts.config_file},
                    {"database", facts.database},
                    {"database_path", facts.database_path},
                    {"console", facts.console},
                    {"marketplace_url", info.cloud_service_url},
                    {"webhook_prefix", ctx.options.webhook_prefix},
                    {"started_at", facts.started_at_unix},
                    {"uptime_seconds", facts.started_at_unix ? now - facts.started_at_unix : 0}});
              },
              Execution::kInline});

  router.Add({"GET", "/api/v1/system/tasks", AuthClass::kEither, [&ctx](Request& req) {
                domain::TaskFilter filter;
                if (auto t = req.Query("type"); t && !t->empty())
                  filter.task_type = std::string(*t);
                if (auto k = req.Query("kind"); k && !k->empty()) filter.kind = std::string(*k);
                auto tasks = ctx.tasks.List(filter);
                if (!tasks) return Fail(req, tasks.error());
                util::JsonArray out;
                for (const auto& t : *tasks) out.push_back(EncodeTask(t));
                return JsonOk(util::JsonObject{{"tasks", std::move(out)}});
              }});

  router.Add({"GET", "/api/v1/system/tasks/{task_id}", AuthClass::kEither, [&ctx](Request& req) {
                const auto text = req.PathParam("task_id");
                std::int64_t id = 0;
                auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
                if (ec != std::errc() || end != text.data() + text.size() || id < 1) {
                  return Fail(req, {util::ErrorCode::kInvalidArgument,
                                    "task_id must be a positive integer"});
                }
                auto task = ctx.tasks.Get(id);
                if (!task) return Fail(req, task.error());
                return JsonOk(util::JsonObject{{"task", EncodeTask(*task)}});
              }});

  router.Add({"GET", "/healthz", AuthClass::kNone,
              [](Request&) {
                Response r;
                r.content_type = "text/plain";
                r.body = "ok\n";
                return r;
              },
              Execution::kInline});
  router.Add({"GET", "/readyz", AuthClass::kNone,
              [&ctx](Request&) {
                Response r;
                r.content_type = "text/plain";
                const bool ready = ctx.ready && ctx.ready();
                r.status = ready ? 200 : 503;
                r.body = ready ? "ready\n" : "not ready\n";
                return r;
              },
              Execution::kInline});
  router.Add({"GET", "/metrics", AuthClass::kEither,
              [&ctx](Request&) {
                Response r;
                r.content_type = "text/plain; version=0.0.4";
                r.body = ctx.metrics.RenderPrometheus();
                if (ctx.metrics_registry) r.body += ctx.metrics_registry->Render();
                return r;
              },
              Execution::kBlocking});
}

}  // namespace sb::http::api
