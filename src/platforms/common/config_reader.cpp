#include "platforms/common/config_reader.hpp"

#include <charconv>

namespace sb::platforms::common {

std::string ConfigString(const util::JsonObject& config, std::string_view key,
                         std::string_view fallback) {
  auto it = config.find(key);
  if (it == config.end() || !it->value().is_string()) return std::string(fallback);
  return std::string(it->value().as_string());
}

bool ConfigBool(const util::JsonObject& config, std::string_view key, bool fallback) {
  auto it = config.find(key);
  if (it == config.end() || !it->value().is_bool()) return fallback;
  return it->value().as_bool();
}

std::int64_t ConfigInt(const util::JsonObject& config, std::string_view key,
                       std::int64_t fallback) {
  auto it = config.find(key);
  if (it == config.end()) return fallback;
  const util::Json& value = it->value();
  if (value.is_int64()) return value.as_int64();
  if (value.is_uint64() && value.as_uint64() <= INT64_MAX) {
    return static_cast<std::int64_t>(value.as_uint64());
  }
  if (value.is_double()) {
    const double d = value.as_double();
    if (d >= -9e18 && d <= 9e18 && d == static_cast<double>(static_cast<std::int64_t>(d))) {
      return static_cast<std::int64_t>(d);
    }
    return fallback;
  }
  if (value.is_string()) {
    std::string_view text = value.as_string();
    std::int64_t out = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) return out;
  }
  return fallback;
}

std::string ConfigBaseUrl(const util::JsonObject& config, std::string_view key,
                          std::string_view fallback) {
  std::string url = ConfigString(config, key);
  if (url.empty()) url = std::string(fallback);
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace sb::platforms::common
