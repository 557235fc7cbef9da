// The requester catalogue: every model-provider wire family of LangBot 4.9.5 with its label,
// default base URL and config schema (data in requesters.json, compiled into the binary).
#pragma once

#include "domain/catalogue.hpp"
#include "util/error.hpp"

namespace sb::llm {

util::Result<domain::Catalogue> LoadRequesterCatalogue();

}  // namespace sb::llm
