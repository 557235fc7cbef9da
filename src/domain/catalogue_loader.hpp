// Builds a Catalogue from a JSON array of descriptors (each with a string `name`). Used by the
// folders that own a catalogue's data (llm/, platforms/).
#pragma once

#include <string_view>

#include "domain/catalogue.hpp"
#include "util/error.hpp"

namespace sb::domain {

// kInternal naming `what` when the text is not an array of named objects: the data ships with
// the binary, so a failure here is a build defect.
util::Result<Catalogue> LoadCatalogue(std::string_view json_text, std::string_view what);

}  // namespace sb::domain
