#include "pipeline/access_control.hpp"

#include "pipeline/config_values.hpp"

namespace sb::pipeline {

AccessDecision CheckAccess(const util::JsonObject& config, LauncherType launcher_type,
                           std::string_view launcher_id) {
  AccessDecision decision;
  decision.session_id = SessionId(launcher_type, launcher_id);
  std::string mode = GetString(config, {"trigger", "access-control", "mode"}, "blacklist");
  const bool whitelist = mode == "whitelist";
  const std::string_view list_name = whitelist ? "whitelist" : "blacklist";
  const std::string type_wildcard = std::string(LauncherTypeName(launcher_type)) + "_*";

  bool found = false;
  for (const std::string& entry : GetStringList(config, {"trigger", "access-control", list_name})) {
    if (entry == "*" || entry == type_wildcard || entry == decision.session_id) {
      found = true;
      break;
    }
  }
  decision.allowed = whitelist ? found : !found;
  return decision;
}

}  // namespace sb::pipeline
