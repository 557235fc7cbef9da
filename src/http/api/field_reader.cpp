#include "http/api/field_reader.hpp"

#include <fmt/format.h>

namespace sb::http::api {

util::Result<FieldReader> FieldReader::Parse(std::string_view body, bool empty_ok) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    if (empty_ok) return FieldReader(util::JsonObject());
    return util::Fail(util::ErrorCode::kInvalidArgument, "request body must be a JSON object");
  }
  auto parsed = util::ParseJson(body);
  if (!parsed) return tl::unexpected(parsed.error());
  if (!parsed->is_object()) {
    return util::Fail(
        util::ErrorCode::kInvalidArgument,
        fmt::format("request body must be a JSON object, not {}", util::JsonKindName(*parsed)));
  }
  return FieldReader(std::move(parsed->as_object()));
}

void FieldReader::Set(std::string message) {
  if (!error_) error_ = util::Error{util::ErrorCode::kInvalidArgument, std::move(message)};
}

const util::Json* FieldReader::Find(std::string_view key) const {
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &it->value();
}

bool FieldReader::Has(std::string_view key) const {
  const auto* v = Find(key);
  return v && !v->is_null();
}

void FieldReader::WrongType(std::string_view key, const char* expected, const util::Json& value) {
  Set(fmt::format("{} must be {}, not {}", key, expected, util::JsonKindName(value)));
}

std::string FieldReader::RequiredString(std::string_view key) {
  const auto* v = Find(key);
  if (!v || v->is_null()) {
    Set(fmt::format("{} is required", key));
    return {};
  }
  if (!v->is_string()) {
    WrongType(key, "a string", *v);
    return {};
  }
  return std::string(v->as_string());
}

std::optional<std::string> FieldReader::OptionalString(std::string_view key) {
  const auto* v = Find(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_string()) {
    WrongType(key, "a string", *v);
    return std::nullopt;
  }
  return std::string(v->as_string());
}

std::optional<bool> FieldReader::OptionalBool(std::string_view key) {
  const auto* v = Find(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_bool()) {
    WrongType(key, "a boolean", *v);
    return std::nullopt;
  }
  return v->as_bool();
}

std::optional<std::int64_t> FieldReader::OptionalInt(std::string_view key) {
  const auto* v = Find(key);
  if (!v || v->is_null()) return std::nullopt;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) {
    Set(fmt::format("{} is out of range", key));
    return std::nullopt;
  }
  WrongType(key, "an integer", *v);
  return std::nullopt;
}

std::optional<util::JsonObject> FieldReader::OptionalObject(std::string_view key) {
  const auto* v = Find(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_object()) {
    WrongType(key, "an object", *v);
    return std::nullopt;
  }
  return v->as_object();
}

util::JsonObject FieldReader::RequiredObject(std::string_view key) {
  const auto* v = Find(key);
  if (!v || v->is_null()) {
    Set(fmt::format("{} is required", key));
    return {};
  }
  if (!v->is_object()) {
    WrongType(key, "an object", *v);
    return {};
  }
  return v->as_object();
}

std::optional<util::JsonArray> FieldReader::OptionalArray(std::string_view key) {
  const auto* v = Find(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_array()) {
    WrongType(key, "an array", *v);
    return std::nullopt;
  }
  return v->as_array();
}

std::optional<std::vector<std::string>> FieldReader::OptionalStringList(std::string_view key) {
  auto array = OptionalArray(key);
  if (!array) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(array->size());
  for (const auto& item : *array) {
    if (!item.is_string()) {
      Set(fmt::format("{} must be an array of strings", key));
      return std::nullopt;
    }
    out.emplace_back(item.as_string());
  }
  return out;
}

}  // namespace sb::http::api
