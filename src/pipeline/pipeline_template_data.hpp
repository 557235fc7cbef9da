// LangBot 4.9.5's pipeline config metadata and default config (pipeline_metadata.json,
// default_pipeline_config.json, compiled in), as the template new pipelines start from.
#pragma once

#include "domain/pipeline_template.hpp"
#include "util/error.hpp"

namespace sb::pipeline {

util::Result<domain::PipelineTemplate> LoadPipelineTemplate();

}  // namespace sb::pipeline
