// Checks a config object against a LangBot-style list of config items
// ([{name, type, required, default, options}]) and fills in the defaults. Used for adapter
// configs now, and for plugin configs later.
//   auto checked = ApplyConfigSchema(ConfigItems(adapter), bot_config, "config");
//   if (!checked) return checked.error();   // kInvalidArgument "config.token is required"
#pragma once

#include <string_view>

#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::services {

// Returns `config` with absent items set to their defaults. Keys the schema does not name are
// kept as given. Fails on the first missing required item or value of the wrong type, naming it
// as `<where>.<name>`.
util::Result<util::JsonObject> ApplyConfigSchema(const util::JsonArray& items,
                                                 const util::JsonObject& config,
                                                 std::string_view where);

// Only the type (and select option) checks of ApplyConfigSchema: absent items, required or
// not, are no error and nothing is filled in.
util::Result<void> CheckConfigTypes(const util::JsonArray& items, const util::JsonObject& config,
                                    std::string_view where);

}  // namespace sb::services
