// The adapter catalogue: every message-platform adapter of LangBot 4.9.5 plus `webhook`, each
// with its config schema including `api_base_url` (data in adapters.json, compiled in).
#pragma once

#include "domain/catalogue.hpp"
#include "util/error.hpp"

namespace sb::platforms {

util::Result<domain::Catalogue> LoadAdapterCatalogue();

}  // namespace sb::platforms
