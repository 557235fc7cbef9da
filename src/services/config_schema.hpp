// Checks a config object against a LangBot-style list of config items
// ([{name, type, required, default, options, format, secret}]) and fills in the defaults; masks
// the secret items for display. Used for adapter
// configs now, and for plugin configs later.
//   auto checked = ApplyConfigSchema(ConfigItems(adapter), bot_config, "config");
//   if (!checked) return checked.error();   // kInvalidArgument "config.token is required"
#pragma once

#include <string>
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

// Secrets as the API shows them without include_secret: the first and last four characters of a
// long one ("sk-a...wxyz"), "****" for a short one.
std::string MaskSecret(std::string_view secret);

// Whether a config item holds a secret: marked "secret": true (the adapter schemas), or of type
// "secret" or "password" (plugin schemas).
bool IsSecretItem(const util::JsonObject& item);

// `config` with the non-empty string value of every secret item masked (MaskSecret).
util::JsonObject MaskSecretItems(const util::JsonArray& items, util::JsonObject config);

// `incoming` with each secret item whose value is exactly the masked form of its `stored` value
// given that stored value back: a client that sends back what a masked GET showed keeps the
// secret instead of replacing it with the mask.
util::JsonObject KeepMaskedSecrets(const util::JsonArray& items, util::JsonObject incoming,
                                   const util::JsonObject& stored);

}  // namespace sb::services
