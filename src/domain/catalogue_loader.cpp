#include "domain/catalogue_loader.hpp"

namespace sb::domain {

util::Result<Catalogue> LoadCatalogue(std::string_view json_text, std::string_view what) {
  auto parsed = util::ParseJson(json_text);
  if (!parsed || !parsed->is_array()) {
    return util::Fail(util::ErrorCode::kInternal, std::string(what) + " data is not a JSON array");
  }
  std::vector<CatalogueEntry> entries;
  for (auto& item : parsed->as_array()) {
    if (!item.is_object() || !item.as_object().contains("name") ||
        !item.as_object().at("name").is_string()) {
      return util::Fail(util::ErrorCode::kInternal,
                        std::string(what) + " data holds an entry without a name");
    }
    std::string name(item.as_object().at("name").as_string());
    entries.push_back({std::move(name), std::move(item.as_object())});
  }
  return Catalogue(std::move(entries));
}

}  // namespace sb::domain
