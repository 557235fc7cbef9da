// What a new pipeline starts from and what its config may hold: LangBot's default pipeline
// config and the metadata of its sections (trigger, safety, ai, output). Provided by pipeline/.
#pragma once

#include "util/json.hpp"

namespace sb::domain {

struct PipelineTemplate {
  util::JsonArray metadata;         // [{name, label, stages:[{name, label, config:[items]}]}]
  util::JsonObject default_config;  // {trigger:{...}, safety:{...}, ai:{...}, output:{...}}
  util::JsonArray default_stages;   // stage names in execution order
};

}  // namespace sb::domain
