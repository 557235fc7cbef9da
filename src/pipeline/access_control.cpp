#include "pipeline/access_control.hpp"

#include "pipeline/config_values.hpp"

namespace sb::pipeline {

AccessSettings AccessSettings::Read(const util::JsonObject& config) {
  AccessSettings s;
  s.whitelist =
      GetString(config, {"trigger", "access-control", "mode"}, "blacklist") == "whitelist";
  s.list =
      GetStringList(config, {"trigger", "access-control", s.whitelist ? "whitelist" : "blacklist"});
  return s;
}

AccessDecision CheckAccess(const AccessSettings& settings, LauncherType launcher_type,
                           std::string_view launcher_id) {
  AccessDecision decision;
  decision.session_id = SessionId(launcher_type, launcher_id);
  const bool whitelist = settings.whitelist;
  const std::string type_wildcard = std::string(LauncherTypeName(launcher_type)) + "_*";

  bool found = false;
  for (const std::string& entry : settings.list) {
    if (entry == "*" || entry == type_wildcard || entry == decision.session_id) {
      found = true;
      break;
    }
  }
  decision.allowed = whitelist ? found : !found;
  return decision;
}

}  // namespace sb::pipeline
