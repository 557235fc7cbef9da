// Typed reads from a pipeline config with a default for every missing or mistyped value, so a
// hand-edited or older config never stops a message; the decision code below never throws.
//   bool at = GetBool(cfg, {"trigger", "group-respond-rules", "at"}, false);
//   auto words = GetStringList(cfg, {"trigger", "ignore-rules", "prefix"});
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

namespace sb::pipeline {

using ConfigPath = std::initializer_list<std::string_view>;

// The value at `path` (object keys only), or null when any step is missing or not an object.
const util::Json* FindConfigValue(const util::JsonObject& config, ConfigPath path);

bool GetBool(const util::JsonObject& config, ConfigPath path, bool fallback);
// Any JSON number; strings are not parsed (mistyped means default).
double GetNumber(const util::JsonObject& config, ConfigPath path, double fallback);
// Integers, and doubles with an integral value (a console may send 60.0).
std::int64_t GetInt(const util::JsonObject& config, ConfigPath path, std::int64_t fallback);
std::string GetString(const util::JsonObject& config, ConfigPath path, std::string_view fallback);
// The string elements of an array; non-string elements are skipped, a non-array gives {}.
std::vector<std::string> GetStringList(const util::JsonObject& config, ConfigPath path);

}  // namespace sb::pipeline
