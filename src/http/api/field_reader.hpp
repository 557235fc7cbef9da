// Decodes a JSON request body into typed values at the edge. The first problem found is kept
// and every later read is a no-op, so a handler reads all fields and checks once:
//   auto body = FieldReader::Parse(req.body);           // 400 unless a JSON object
//   if (!body) return JsonError(body.error(), req.request_id);
//   std::string name = body->RequiredString("name");
//   auto desc = body->OptionalString("description");
//   if (auto e = body->error()) return JsonError(*e, req.request_id);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace sb::http::api {

class FieldReader {
 public:
  // kInvalidArgument when `body` is not a JSON object (an empty body counts as `{}` only when
  // `empty_ok`).
  static util::Result<FieldReader> Parse(std::string_view body, bool empty_ok = false);
  explicit FieldReader(util::JsonObject object) : object_(std::move(object)) {}

  bool Has(std::string_view key) const;
  std::string RequiredString(std::string_view key);
  std::optional<std::string> OptionalString(std::string_view key);
  std::optional<bool> OptionalBool(std::string_view key);
  std::optional<std::int64_t> OptionalInt(std::string_view key);
  std::optional<util::JsonObject> OptionalObject(std::string_view key);
  std::optional<util::JsonArray> OptionalArray(std::string_view key);
  std::optional<std::vector<std::string>> OptionalStringList(std::string_view key);
  util::JsonObject RequiredObject(std::string_view key);
  // Null counts as absent; otherwise must be a UUID.
  template <typename Id>
  std::optional<Id> OptionalId(std::string_view key) {
    auto text = OptionalString(key);
    if (!text || text->empty()) return std::nullopt;
    auto id = Id::Parse(*text, key);
    if (!id) {
      Set(id.error().message);
      return std::nullopt;
    }
    return *id;
  }

  const util::JsonObject& object() const { return object_; }
  const std::optional<util::Error>& error() const { return error_; }
  // Records a problem found by the handler itself (first one wins).
  void Set(std::string message);

 private:
  const util::Json* Find(std::string_view key) const;
  void WrongType(std::string_view key, const char* expected, const util::Json& value);

  util::JsonObject object_;
  std::optional<util::Error> error_;
};

}  // namespace sb::http::api
