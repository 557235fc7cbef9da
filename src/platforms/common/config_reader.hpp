// Lenient reads of an adapter's config object: the bot service has already checked the config
// against the adapter's schema and filled in defaults, so a missing or mistyped key only means
// "use the fallback".
//   std::string token = ConfigString(context.config, "token");
//   std::string base = ConfigBaseUrl(context.config, "api_base_url", "https://slack.com/api");
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/json.hpp"

namespace sb::platforms::common {

std::string ConfigString(const util::JsonObject& config, std::string_view key,
                         std::string_view fallback = {});
bool ConfigBool(const util::JsonObject& config, std::string_view key, bool fallback);
// Integers, and numbers written as strings ("2280"), as config forms often send them.
std::int64_t ConfigInt(const util::JsonObject& config, std::string_view key, std::int64_t fallback);
// A base URL without its trailing slashes; `fallback` when the key is missing or empty.
std::string ConfigBaseUrl(const util::JsonObject& config, std::string_view key,
                          std::string_view fallback);

}  // namespace sb::platforms::common
