#include "pipeline/config_values.hpp"

#include <cmath>
#include <limits>

namespace sb::pipeline {

const util::Json* FindConfigValue(const util::JsonObject& config, ConfigPath path) {
  const util::JsonObject* object = &config;
  const util::Json* value = nullptr;
  for (std::string_view key : path) {
    if (object == nullptr) return nullptr;
    auto it = object->find(key);
    if (it == object->end()) return nullptr;
    value = &it->value();
    object = value->if_object();
  }
  return value;
}

bool GetBool(const util::JsonObject& config, ConfigPath path, bool fallback) {
  const util::Json* value = FindConfigValue(config, path);
  if (value == nullptr || !value->is_bool()) return fallback;
  return value->get_bool();
}

double GetNumber(const util::JsonObject& config, ConfigPath path, double fallback) {
  const util::Json* value = FindConfigValue(config, path);
  if (value == nullptr) return fallback;
  if (value->is_double()) return value->get_double();
  if (value->is_int64()) return static_cast<double>(value->get_int64());
  if (value->is_uint64()) return static_cast<double>(value->get_uint64());
  return fallback;
}

std::int64_t GetInt(const util::JsonObject& config, ConfigPath path, std::int64_t fallback) {
  const util::Json* value = FindConfigValue(config, path);
  if (value == nullptr) return fallback;
  if (value->is_int64()) return value->get_int64();
  if (value->is_uint64()) {
    auto u = value->get_uint64();
    return u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? fallback
               : static_cast<std::int64_t>(u);
  }
  if (value->is_double()) {
    double d = value->get_double();
    // Below ~2^62, so the cast cannot overflow int64.
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 4.6e18) {
      return static_cast<std::int64_t>(d);
    }
  }
  return fallback;
}

std::string GetString(const util::JsonObject& config, ConfigPath path, std::string_view fallback) {
  const util::Json* value = FindConfigValue(config, path);
  if (value == nullptr || !value->is_string()) return std::string(fallback);
  return std::string(value->get_string());
}

std::vector<std::string> GetStringList(const util::JsonObject& config, ConfigPath path) {
  std::vector<std::string> out;
  const util::Json* value = FindConfigValue(config, path);
  if (value == nullptr || !value->is_array()) return out;
  for (const auto& element : value->get_array()) {
    if (element.is_string()) out.emplace_back(element.get_string());
  }
  return out;
}

}  // namespace sb::pipeline
