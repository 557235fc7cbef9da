// Everything the engine's stages read from a pipeline config, as typed values: read once per
// pipeline change (PipelineSnapshot) and shared by every query of that pipeline, so a message
// costs no JSON lookups and no regex compilation.
//   auto settings = std::make_shared<const StageSettings>(StageSettings::Read(config));
//   Query q = MakeQuery(..., config, settings);
//   if (CheckAccess(q.Settings().access, q.launcher_type, q.launcher_id).allowed) ...
#pragma once

#include <string>

#include "pipeline/access_control.hpp"
#include "pipeline/content_filter.hpp"
#include "pipeline/ignore_rules.hpp"
#include "pipeline/output_rules.hpp"
#include "pipeline/rate_limiter.hpp"
#include "pipeline/trigger_rules.hpp"
#include "util/json.hpp"

namespace sb::pipeline {

struct StageSettings {
  TriggerSettings trigger;
  AccessSettings access;
  IgnoreSettings ignore;
  FilterSettings filter;
  RateLimitSettings rate_limit;
  OutputSettings output;
  std::string runner;  // ai.runner.runner (default local-agent)

  static StageSettings Read(const util::JsonObject& config);
};

}  // namespace sb::pipeline
