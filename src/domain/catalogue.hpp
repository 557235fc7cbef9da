// A read-only list of named descriptors: the requester catalogue (from llm/), the adapter
// catalogue (from platforms/). Each descriptor is LangBot's JSON shape, served as is.
//   const CatalogueEntry* e = catalogue.Find("telegram");
//   if (e) schema = ConfigItems(e->descriptor);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

namespace sb::domain {

struct CatalogueEntry {
  std::string name;
  util::JsonObject descriptor;  // {name, label, description, icon, spec:{config:[...]}, ...}
};

class Catalogue {
 public:
  Catalogue() = default;
  explicit Catalogue(std::vector<CatalogueEntry> entries) : entries_(std::move(entries)) {}

  const std::vector<CatalogueEntry>& entries() const { return entries_; }
  // nullptr when no entry has this name.
  const CatalogueEntry* Find(std::string_view name) const;

 private:
  std::vector<CatalogueEntry> entries_;
};

// The `spec.config` item list of a descriptor (empty array when absent).
const util::JsonArray& ConfigItems(const util::JsonObject& descriptor);

}  // namespace sb::domain
