// Lenient reads of fields in a platform's JSON (events, API answers): a field that is absent or of
// another type reads as "not there", so a codec decides per field whether that is an error.
//   if (const auto* ts = StringField(event, "ts")) ...;
//   const util::JsonObject* source = ObjectField(event, "source");
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "util/json.hpp"

namespace sb::platforms::common {

// The string at `key`, or null when absent or not a string.
const boost::json::string* StringField(const util::JsonObject& obj, std::string_view key);
// The string at `key` as a view; empty when absent or not a string.
std::string_view StringOr(const util::JsonObject& obj, std::string_view key);
const util::JsonObject* ObjectField(const util::JsonObject& obj, std::string_view key);
const util::JsonArray* ArrayField(const util::JsonObject& obj, std::string_view key);
// true only for a JSON `true`.
bool IsTrue(const util::JsonObject& obj, std::string_view key);
// An integer field (int64, or uint64 that fits); nullopt otherwise.
std::optional<std::int64_t> IntField(const util::JsonObject& obj, std::string_view key);

}  // namespace sb::platforms::common
