// Free-form JSON values (adapter configs, pipeline configs, schemas) and the few operations the
// services need on them. Typed fields are decoded at the HTTP edge; only values whose shape is
// defined by a schema at run time travel as Json.
//   auto parsed = ParseJson(body);            // kInvalidArgument with the offset on bad input
//   DeepMerge(defaults, user_config);          // user_config wins, objects merge recursively
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace sb::util {

using Json = boost::json::value;
using JsonObject = boost::json::object;
using JsonArray = boost::json::array;

// Whole-document parse; fails with kInvalidArgument "malformed JSON at offset N: <reason>".
Result<Json> ParseJson(std::string_view text);
// Compact JSON; doubles in their shortest round-trip form ("1.5", not Boost's "1.5E0").
std::string SerializeJson(const Json& value);
void AppendJson(std::string& out, const Json& value);

// Copies `overlay` onto `base`: nested objects merge key by key, anything else replaces.
void DeepMerge(JsonObject& base, const JsonObject& overlay);

// `text` with every byte sequence that is not well-formed UTF-8 (RFC 3629: no overlong forms,
// surrogates or code points past U+10FFFF) replaced by U+FFFD. Boost.JSON writes strings' bytes
// as they are, so text from a client (a percent-decoded path) goes through this before it is
// quoted in a JSON answer.
std::string ToValidUtf8(std::string_view text);

// JSON type name for messages ("string", "object", ...).
const char* JsonKindName(const Json& value);

}  // namespace sb::util
