#include "pipeline/pipeline_template_data.hpp"

#include <string_view>

namespace sb::embedded {
extern const std::string_view kPipelineMetadataJson;
extern const std::string_view kDefaultPipelineConfigJson;
}  // namespace sb::embedded

namespace sb::pipeline {

util::Result<domain::PipelineTemplate> LoadPipelineTemplate() {
  auto metadata = util::ParseJson(embedded::kPipelineMetadataJson);
  auto config = util::ParseJson(embedded::kDefaultPipelineConfigJson);
  if (!metadata || !metadata->is_array() || !config || !config->is_object()) {
    return util::Fail(util::ErrorCode::kInternal, "pipeline template data is malformed");
  }
  domain::PipelineTemplate t;
  t.metadata = std::move(metadata->as_array());
  t.default_config = std::move(config->as_object());
  // LangBot's stage chain, in execution order.
  for (const char* stage :
       {"GroupRespondRuleCheckStage", "BanSessionCheckStage", "PreContentFilterStage",
        "PreProcessor", "MessageProcessor", "PostContentFilterStage", "ResponseWrapper",
        "LongTextProcessStage", "SendResponseBackStage"}) {
    t.default_stages.emplace_back(stage);
  }
  return t;
}

}  // namespace sb::pipeline
