#include "llm/requester_catalogue.hpp"

#include <string_view>

#include "domain/catalogue_loader.hpp"

namespace sb::embedded {
extern const std::string_view kRequestersJson;
}  // namespace sb::embedded

namespace sb::llm {

util::Result<domain::Catalogue> LoadRequesterCatalogue() {
  return domain::LoadCatalogue(embedded::kRequestersJson, "requester catalogue");
}

}  // namespace sb::llm
