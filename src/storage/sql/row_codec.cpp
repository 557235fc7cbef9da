#include "storage/sql/row_codec.hpp"

#include <fmt/format.h>

namespace sb::storage::sql {

namespace {

util::Error Damaged(std::string_view what, std::string_view why) {
  return util::Error{util::ErrorCode::kInternal,
                     fmt::format("stored {} is damaged: {}", what, why)};
}

}  // namespace

std::string JsonToText(const util::Json& value) { return util::SerializeJson(value); }

std::string StringListToText(const std::vector<std::string>& list) {
  util::JsonArray array;
  array.reserve(list.size());
  for (const auto& s : list) array.emplace_back(s);
  return util::SerializeJson(array);
}

util::Result<util::Json> JsonFromText(std::string_view text, std::string_view what) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return tl::make_unexpected(Damaged(what, parsed.error().message));
  return parsed;
}

util::Result<util::JsonObject> ObjectFromText(std::string_view text, std::string_view what) {
  auto parsed = JsonFromText(text, what);
  if (!parsed) return tl::make_unexpected(parsed.error());
  if (!parsed->is_object()) {
    return tl::make_unexpected(
        Damaged(what, fmt::format("expected an object, found {}", util::JsonKindName(*parsed))));
  }
  return std::move(parsed->as_object());
}

util::Result<util::JsonArray> ArrayFromText(std::string_view text, std::string_view what) {
  auto parsed = JsonFromText(text, what);
  if (!parsed) return tl::make_unexpected(parsed.error());
  if (!parsed->is_array()) {
    return tl::make_unexpected(
        Damaged(what, fmt::format("expected an array, found {}", util::JsonKindName(*parsed))));
  }
  return std::move(parsed->as_array());
}

util::Result<std::vector<std::string>> StringListFromText(std::string_view text,
                                                          std::string_view what) {
  auto array = ArrayFromText(text, what);
  if (!array) return tl::make_unexpected(array.error());
  std::vector<std::string> out;
  out.reserve(array->size());
  for (const auto& item : *array) {
    if (!item.is_string()) return tl::make_unexpected(Damaged(what, "expected a list of strings"));
    out.emplace_back(item.as_string());
  }
  return out;
}

}  // namespace sb::storage::sql
