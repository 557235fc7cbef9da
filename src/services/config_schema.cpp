#include "services/config_schema.hpp"

#include <fmt/format.h>

#include "services/provider_service.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;
using util::Json;

std::string_view StringField(const util::JsonObject& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end() || !it->value().is_string()) return {};
  return it->value().as_string();
}

bool IsInteger(const Json& v) {
  if (v.is_int64() || v.is_uint64()) return true;
  return false;
}

// The allowed values of a select item's options: each option's `name` (LangBot's usual form) or
// `value` (the form some adapter schemas use, such as web_page_bot's language).
bool OptionAllowed(const util::JsonObject& item, const Json& value) {
  auto it = item.find("options");
  if (it == item.end() || !it->value().is_array() || it->value().as_array().empty()) return true;
  for (const auto& opt : it->value().as_array()) {
    if (opt.is_object()) {
      const auto& o = opt.as_object();
      auto n = o.find("name");
      if (n != o.end() && n->value() == value) return true;
      auto v = o.find("value");
      if (v != o.end() && v->value() == value) return true;
    } else if (opt == value) {
      return true;
    }
  }
  return false;
}

util::Result<void> CheckValue(const util::JsonObject& item, const Json& value,
                              const std::string& path) {
  const std::string_view type = StringField(item, "type");
  auto wrong = [&](const char* expected) {
    return util::Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("{} must be {}, not {}", path, expected, util::JsonKindName(value)));
  };
  if (type == "string" || type == "text" || type == "secret" || type == "prompt-editor-text" ||
      type == "password") {
    if (!value.is_string()) return wrong("a string");
  } else if (type == "integer" || type == "int") {
    if (!IsInteger(value)) return wrong("an integer");
  } else if (type == "float" || type == "number") {
    if (!value.is_number()) return wrong("a number");
  } else if (type == "boolean" || type == "bool") {
    if (!value.is_bool()) return wrong("a boolean");
  } else if (type == "array[string]") {
    if (!value.is_array()) return wrong("an array of strings");
    for (const auto& e : value.as_array()) {
      if (!e.is_string()) return wrong("an array of strings");
    }
  } else if (type == "array" || type.rfind("array[", 0) == 0) {
    if (!value.is_array()) return wrong("an array");
  } else if (type == "object") {
    if (!value.is_object()) return wrong("an object");
  } else if (type == "select") {
    if (!OptionAllowed(item, value)) {
      return util::Fail(ErrorCode::kInvalidArgument,
                        fmt::format("{} has a value that is not one of its options", path));
    }
  }
  // Other types (selectors of models, knowledge bases, bots; editors) carry values whose shape
  // the console decides; they are stored as given.
  // A URL the server will call or connect to must not name a local file or another protocol
  // (file://, gopher://); empty means "not set".
  const std::string_view format = StringField(item, "format");
  if (value.is_string() && !value.as_string().empty()) {
    const std::string_view text = value.as_string();
    if (format == "http-url" && !IsHttpUrl(text)) {
      return util::Fail(ErrorCode::kInvalidArgument,
                        fmt::format("{} must be an http:// or https:// URL", path));
    }
    if (format == "ws-url" && !IsWebSocketUrl(text)) {
      return util::Fail(ErrorCode::kInvalidArgument,
                        fmt::format("{} must be a ws:// or wss:// URL", path));
    }
  }
  return util::Ok();
}

util::Result<util::JsonObject> Apply(const util::JsonArray& items, const util::JsonObject& config,
                                     std::string_view where, bool fill) {
  util::JsonObject out = config;
  for (const auto& raw : items) {
    if (!raw.is_object()) continue;
    const auto& item = raw.as_object();
    const std::string_view name = StringField(item, "name");
    if (name.empty()) continue;
    const std::string path = fmt::format("{}.{}", where, name);
    auto it = out.find(name);
    if (it == out.end() || (it->value().is_null() && fill)) {
      auto def = item.find("default");
      const bool required = item.contains("required") && item.at("required") == Json(true);
      // An empty default of a required item is a placeholder, not a value (webhook secret).
      const bool usable_default = def != item.end() && !(required && def->value().is_string() &&
                                                         def->value().as_string().empty());
      if (usable_default && fill) {
        out[name] = def->value();
        continue;
      }
      // Only a fill pass enforces `required`: CheckConfigTypes checks the types of what is
      // there (a pipeline config need not name every item of its metadata).
      if (required && fill) {
        return util::Fail(ErrorCode::kInvalidArgument, fmt::format("{} is required", path));
      }
      continue;
    }
    if (auto ok = CheckValue(item, it->value(), path); !ok) return tl::unexpected(ok.error());
    const bool required = item.contains("required") && item.at("required") == Json(true);
    if (fill && required && it->value().is_string() && it->value().as_string().empty()) {
      return util::Fail(ErrorCode::kInvalidArgument, fmt::format("{} must not be empty", path));
    }
  }
  return out;
}

// The string value of each secret item that has one, with its name.
template <typename Fn>
void ForEachSecret(const util::JsonArray& items, util::JsonObject& config, Fn&& fn) {
  for (const auto& raw : items) {
    if (!raw.is_object() || !IsSecretItem(raw.as_object())) continue;
    const std::string_view name = StringField(raw.as_object(), "name");
    auto it = config.find(name);
    if (name.empty() || it == config.end() || !it->value().is_string()) continue;
    fn(name, it->value());
  }
}

}  // namespace

std::string MaskSecret(std::string_view secret) {
  if (secret.size() < 12) return "****";
  return std::string(secret.substr(0, 4)) + "..." + std::string(secret.substr(secret.size() - 4));
}

bool IsSecretItem(const util::JsonObject& item) {
  const std::string_view type = StringField(item, "type");
  auto it = item.find("secret");
  return type == "secret" || type == "password" || (it != item.end() && it->value() == Json(true));
}

util::JsonObject MaskSecretItems(const util::JsonArray& items, util::JsonObject config) {
  ForEachSecret(items, config, [](std::string_view, Json& value) {
    if (!value.as_string().empty()) value = MaskSecret(value.as_string());
  });
  return config;
}

util::JsonObject KeepMaskedSecrets(const util::JsonArray& items, util::JsonObject incoming,
                                   const util::JsonObject& stored) {
  ForEachSecret(items, incoming, [&stored](std::string_view name, Json& value) {
    auto old = stored.find(name);
    if (old == stored.end() || !old->value().is_string()) return;
    const auto& old_text = old->value().as_string();
    if (!old_text.empty() && value.as_string() == MaskSecret(old_text)) value = old->value();
  });
  return incoming;
}

util::Result<util::JsonObject> ApplyConfigSchema(const util::JsonArray& items,
                                                 const util::JsonObject& config,
                                                 std::string_view where) {
  return Apply(items, config, where, true);
}

util::Result<void> CheckConfigTypes(const util::JsonArray& items, const util::JsonObject& config,
                                    std::string_view where) {
  auto r = Apply(items, config, where, false);
  if (!r) return tl::unexpected(r.error());
  return util::Ok();
}

}  // namespace sb::services
