#include "platforms/adapter_catalogue.hpp"

#include <string_view>

#include "domain/catalogue_loader.hpp"

namespace sb::embedded {
extern const std::string_view kAdaptersJson;
}  // namespace sb::embedded

namespace sb::platforms {

util::Result<domain::Catalogue> LoadAdapterCatalogue() {
  return domain::LoadCatalogue(embedded::kAdaptersJson, "adapter catalogue");
}

}  // namespace sb::platforms
