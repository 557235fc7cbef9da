#include "http/api/encoders.hpp"

#include "services/config_schema.hpp"

namespace sb::http::api {
namespace {

util::JsonArray Strings(const std::vector<std::string>& values) {
  util::JsonArray out;
  out.reserve(values.size());
  for (const auto& v : values) out.emplace_back(v);
  return out;
}

util::JsonArray Keys(const std::vector<std::string>& keys, bool include_secret) {
  util::JsonArray out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.emplace_back(include_secret ? k : MaskSecret(k));
  return out;
}

}  // namespace

std::string MaskSecret(const std::string& secret) { return services::MaskSecret(secret); }

util::JsonObject EncodeProvider(const domain::ProviderUsage& u, bool include_secret) {
  const auto& p = u.provider;
  return util::JsonObject{{"uuid", p.uuid.str()},
                          {"name", p.name},
                          {"requester", p.requester},
                          {"base_url", p.base_url},
                          {"api_keys", Keys(p.api_keys, include_secret)},
                          {"llm_count", u.llm_count},
                          {"embedding_count", u.embedding_count},
                          {"created_at", util::FormatRfc3339(p.created_at)},
                          {"updated_at", util::FormatRfc3339(p.updated_at)}};
}

util::JsonObject EncodeModel(const services::ModelView& v, bool include_secret,
                             bool with_provider) {
  const auto& m = v.model;
  util::JsonObject out{{"uuid", m.uuid.str()},
                       {"name", m.name},
                       {"description", m.description},
                       {"provider_uuid", m.provider_uuid.str()},
                       {"requester", v.provider.requester},
                       {"requester_config", m.requester_config},
                       {"api_keys", util::JsonArray{util::JsonObject{
                                        {"name", v.provider.name},
                                        {"keys", Keys(v.provider.api_keys, include_secret)}}}},
                       {"extra_args", m.extra_args},
                       {"prefered_ranking", m.prefered_ranking},
                       {"created_at", util::FormatRfc3339(m.created_at)},
                       {"updated_at", util::FormatRfc3339(m.updated_at)}};
  if (m.kind == domain::ModelKind::kLlm) {
    out["abilities"] = Strings(m.abilities);
  } else {
    out["dimensions"] = m.dimensions ? util::Json(*m.dimensions) : util::Json(nullptr);
  }
  if (with_provider) {
    out["provider"] = EncodeProvider({v.provider, 0, 0}, include_secret);
    out["provider"].as_object().erase("llm_count");
    out["provider"].as_object().erase("embedding_count");
  }
  return out;
}

util::JsonObject EncodeBot(const services::BotView& v, const WebhookPrefixes* detail) {
  const auto& b = v.bot;
  util::JsonObject runtime{{"status", domain::RuntimeStateName(v.runtime.state)},
                           {"since", util::FormatRfc3339(v.runtime.since)}};
  if (!v.runtime.error.empty()) runtime["error"] = v.runtime.error;
  util::JsonObject out{
      {"uuid", b.uuid.str()},
      {"name", b.name},
      {"description", b.description},
      {"adapter", b.adapter},
      {"adapter_config", b.adapter_config},
      {"config", b.adapter_config},
      {"enable", b.enable},
      {"use_pipeline_uuid",
       b.use_pipeline_uuid ? util::Json(b.use_pipeline_uuid->str()) : util::Json(nullptr)},
      {"log_retention", b.log_retention ? util::Json(*b.log_retention) : util::Json(nullptr)},
      {"runtime", std::move(runtime)},
      {"created_at", util::FormatRfc3339(b.created_at)},
      {"updated_at", util::FormatRfc3339(b.updated_at)}};
  if (detail) {
    const std::string path = "/bots/" + b.uuid.str();
    out["adapter_runtime_values"] = util::JsonObject{
        {"bot_account_id", v.runtime.bot_account_id},
        {"webhook_url", path},
        {"webhook_full_url", detail->main + path},
        {"extra_webhook_full_url", detail->extra.empty() ? std::string() : detail->extra + path}};
  }
  return out;
}

util::JsonObject EncodeLogEntry(const domain::BotLogEntry& e) {
  return util::JsonObject{{"seq_id", e.seq_id},
                          {"timestamp", util::ToUnixSeconds(e.timestamp)},
                          {"level", domain::LogLevelName(e.level)},
                          {"text", e.text},
                          {"images", Strings(e.images)},
                          {"message_session_id", e.message_session_id},
                          {"created_at", util::FormatRfc3339(e.timestamp)}};
}

util::JsonObject EncodePipeline(const domain::Pipeline& p) {
  return util::JsonObject{{"uuid", p.uuid.str()},
                          {"name", p.name},
                          {"description", p.description},
                          {"emoji", p.emoji},
                          {"config", p.config},
                          {"stages", p.stages},
                          {"is_default", p.is_default},
                          {"for_version", p.for_version},
                          {"extensions_preferences", p.extensions_preferences},
                          {"created_at", util::FormatRfc3339(p.created_at)},
                          {"updated_at", util::FormatRfc3339(p.updated_at)}};
}

util::JsonObject EncodeTask(const domain::Task& t) {
  const bool done = t.status == domain::TaskStatus::kSucceeded ||
                    t.status == domain::TaskStatus::kFailed ||
                    t.status == domain::TaskStatus::kCancelled;
  return util::JsonObject{
      {"id", t.id},
      {"task_type", t.task_type},
      {"kind", t.kind},
      {"name", t.name},
      {"label", t.label},
      {"status", domain::TaskStatusName(t.status)},
      {"task_context",
       util::JsonObject{
           {"current_action", t.current_action}, {"log", t.log}, {"metadata", t.metadata}}},
      {"runtime", util::JsonObject{{"done", done},
                                   {"state", domain::TaskStatusName(t.status)},
                                   {"exception", t.exception.empty() ? util::Json(nullptr)
                                                                     : util::Json(t.exception)},
                                   {"result", t.result}}},
      {"created_at", util::FormatRfc3339(t.created_at)},
      {"updated_at", util::FormatRfc3339(t.updated_at)}};
}

util::JsonObject EncodeApiKey(const domain::ApiKey& k) {
  return util::JsonObject{{"id", k.id},
                          {"name", k.name},
                          {"description", k.description},
                          {"key", k.masked_key},
                          {"created_at", util::FormatRfc3339(k.created_at)},
                          {"updated_at", util::FormatRfc3339(k.updated_at)}};
}

util::JsonObject EncodeSystemInfo(const services::SystemInfo& i) {
  return util::JsonObject{{"version", i.version},
                          {"api_version", "4.9.5"},
                          {"debug", i.debug},
                          {"edition", i.edition},
                          {"enable_marketplace", i.enable_marketplace},
                          {"cloud_service_url", i.cloud_service_url},
                          {"allow_modify_login_info", i.allow_modify_login_info},
                          {"disable_models_service", i.disable_models_service},
                          {"limitation", util::JsonObject()},
                          {"wizard_status", i.wizard_status},
                          {"wizard_progress", i.wizard_progress}};
}

}  // namespace sb::http::api
