#include "platforms/common/json_fields.hpp"

#include <cstdint>

namespace sb::platforms::common {

const boost::json::string* StringField(const util::JsonObject& obj, std::string_view key) {
  const util::Json* value = obj.if_contains(key);
  return value != nullptr && value->is_string() ? &value->get_string() : nullptr;
}

std::string_view StringOr(const util::JsonObject& obj, std::string_view key) {
  const auto* s = StringField(obj, key);
  return s == nullptr ? std::string_view() : std::string_view(s->data(), s->size());
}

const util::JsonObject* ObjectField(const util::JsonObject& obj, std::string_view key) {
  const util::Json* value = obj.if_contains(key);
  return value != nullptr && value->is_object() ? &value->get_object() : nullptr;
}

const util::JsonArray* ArrayField(const util::JsonObject& obj, std::string_view key) {
  const util::Json* value = obj.if_contains(key);
  return value != nullptr && value->is_array() ? &value->get_array() : nullptr;
}

bool IsTrue(const util::JsonObject& obj, std::string_view key) {
  const util::Json* value = obj.if_contains(key);
  return value != nullptr && value->is_bool() && value->get_bool();
}

std::optional<std::int64_t> IntField(const util::JsonObject& obj, std::string_view key) {
  const util::Json* value = obj.if_contains(key);
  if (value == nullptr) return std::nullopt;
  if (value->is_int64()) return value->get_int64();
  if (value->is_uint64() && value->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(value->get_uint64());
  }
  return std::nullopt;
}

}  // namespace sb::platforms::common
