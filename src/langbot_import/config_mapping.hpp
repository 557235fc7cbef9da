// LangBot's data/config.yaml against Switchboard's config: which LangBot settings have an
// equivalent here, what they become, and which have none (and why). A setting is taken only when
// the LangBot installation changed it from LangBot's own default, so LangBot's defaults never
// replace Switchboard's.
//   auto settings = MapLangbotConfig(yaml_text, current_config);
//   for (auto& s : settings->settings) if (s.differs) ApplySetting(cfg, s);
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "util/error.hpp"

namespace sb::langbot_import {

struct ConfigSetting {
  std::string langbot_key;          // "system.jwt.expire"
  std::string our_key;              // "auth.jwt_expire_seconds"
  std::string value;                // LangBot's value, as text
  std::string current;              // Switchboard's current value, as text
  bool current_is_default = false;  // Switchboard's value is its own default
  bool secret = false;              // never printed (a proxy URL may hold a password)
  std::function<void(config::Config&)> apply;
};

struct SkippedSetting {
  std::string langbot_key;  // a key or a section
  std::string reason;
};

struct ConfigMapping {
  std::vector<ConfigSetting> settings;  // LangBot changed these; each has an equivalent
  std::vector<SkippedSetting> skipped;
};

// kInvalidArgument when `yaml_text` is not YAML or not a mapping. `current` is the config as
// the file holds it (without environment overrides).
util::Result<ConfigMapping> MapLangbotConfig(const std::string& yaml_text,
                                             const config::Config& current);

}  // namespace sb::langbot_import
