// LangBot's access control: a blacklist or a whitelist of session ids ("person_<id>",
// "group_<id>") with the wildcards "person_*", "group_*" and "*".
//   AccessDecision d = CheckAccess(query.Config(), query.launcher_type, query.launcher_id);
//   if (!d.allowed) log("ignored by access control: " + d.session_id);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipeline/query.hpp"
#include "util/json.hpp"

namespace sb::pipeline {

struct AccessDecision {
  bool allowed = true;
  std::string session_id;  // the id that was looked up, for the log line
};

// trigger.access-control: mode "blacklist" (default; also for an unknown mode) or "whitelist",
// and the list named by the mode.
struct AccessSettings {
  bool whitelist = false;
  std::vector<std::string> list;

  static AccessSettings Read(const util::JsonObject& config);
};

// An empty whitelist admits nobody.
AccessDecision CheckAccess(const AccessSettings& settings, LauncherType launcher_type,
                           std::string_view launcher_id);

}  // namespace sb::pipeline
