#include "platforms/discord/discord_fields.hpp"

#include <fmt/format.h>

#include "platforms/common/chain_builder.hpp"

namespace sb::platforms::discord {

using common::Invalid;
using util::Json;
using util::JsonObject;

const Json* Find(const JsonObject& o, std::string_view key) { return o.if_contains(key); }

util::Result<std::string> OptionalString(const JsonObject& o, std::string_view key,
                                         std::string_view where) {
  const Json* v = Find(o, key);
  if (v == nullptr || v->is_null()) return std::string();
  if (!v->is_string()) return Invalid(fmt::format("{}.{} must be a string", where, key));
  return std::string(v->get_string());
}

util::Result<std::string> RequireString(const JsonObject& o, std::string_view key,
                                        std::string_view where) {
  const Json* v = Find(o, key);
  if (v == nullptr || !v->is_string() || v->get_string().empty()) {
    return Invalid(fmt::format("{}.{} must be a string", where, key));
  }
  return std::string(v->get_string());
}

bool TrueField(const JsonObject& o, std::string_view key) {
  const Json* v = Find(o, key);
  return v != nullptr && v->is_bool() && v->get_bool();
}

std::string Truncated(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut));
}

}  // namespace sb::platforms::discord
