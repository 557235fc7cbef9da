#include "pipeline/stage_settings.hpp"

#include "pipeline/config_values.hpp"

namespace sb::pipeline {

StageSettings StageSettings::Read(const util::JsonObject& config) {
  StageSettings s;
  s.trigger = TriggerSettings::Read(config);
  s.access = AccessSettings::Read(config);
  s.ignore = IgnoreSettings::Read(config);
  s.filter = FilterSettings::Read(config);
  s.rate_limit = RateLimitSettings::FromConfig(config);
  s.output = OutputSettings::Read(config);
  s.runner = GetString(config, {"ai", "runner", "runner"}, "local-agent");
  return s;
}

}  // namespace sb::pipeline
