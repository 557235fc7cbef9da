#include "plugins/manifest.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>

#include "util/utf8.hpp"

namespace sb::plugins {
namespace {

using util::ErrorCode;

tl::unexpected<util::Error> Invalid(std::string_view field, std::string_view why) {
  return util::Fail(ErrorCode::kInvalidArgument, fmt::format("manifest: {} {}", field, why));
}

// A plain scalar takes YAML 1.2's core types; a quoted one is always a string.
util::Json ScalarToJson(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() != "!") {
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
    if (text == "null" || text == "Null" || text == "NULL" || text == "~") return nullptr;
    std::int64_t integer = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), integer);
    if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) return integer;
    double real = 0;
    auto [rend, rec] = std::from_chars(text.data(), text.data() + text.size(), real);
    if (rec == std::errc() && rend == text.data() + text.size() && !text.empty()) return real;
  }
  return util::Json(boost::json::string(text));
}

util::Json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      util::JsonArray out;
      for (const auto& item : node) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      util::JsonObject out;
      for (const auto& item : node) out[item.first.as<std::string>()] = YamlToJson(item.second);
      return out;
    }
    default:
      return nullptr;
  }
}

util::Result<std::string> RequiredString(const YAML::Node& parent, const char* key,
                                         std::string_view field) {
  const YAML::Node node = parent[key];
  if (!node || node.IsNull()) return Invalid(field, "is required");
  if (!node.IsScalar()) return Invalid(field, "must be a string");
  return node.Scalar();
}

std::string OptionalString(const YAML::Node& parent, const char* key) {
  const YAML::Node node = parent[key];
  return node && node.IsScalar() ? node.Scalar() : std::string();
}

// label / description: a map of language code to text, or a bare string (taken as en_US).
util::Result<util::JsonObject> I18nText(const YAML::Node& parent, const char* key,
                                        std::string_view field) {
  const YAML::Node node = parent[key];
  util::JsonObject out;
  if (!node || node.IsNull()) return out;
  if (node.IsScalar()) {
    out["en_US"] = node.Scalar();
    return out;
  }
  if (!node.IsMap()) return Invalid(field, "must map language codes to text");
  for (const auto& item : node) {
    if (!item.second.IsScalar()) return Invalid(field, "must map language codes to text");
    out[item.first.as<std::string>()] = item.second.Scalar();
  }
  return out;
}

// A relative path that stays inside the plugin's folder.
bool InsidePackage(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find('\\') != std::string_view::npos) {
    return false;
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto slash = path.find('/', start);
    std::string_view part =
        path.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (part == "..") return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

util::Result<std::vector<std::string>> Command(const YAML::Node& root) {
  const YAML::Node execution = root["execution"];
  if (!execution || !execution.IsMap()) return Invalid("execution", "is required");
  const YAML::Node command = execution["command"];
  if (!command) {
    if (execution["python"]) {
      return Invalid("execution.command",
                     "is required (LangBot SDK plugins, execution.python, do not run here: see "
                     "docs/plugins.md)");
    }
    return Invalid("execution.command", "is required");
  }
  if (!command.IsSequence() || command.size() == 0) {
    return Invalid("execution.command", "must be a non-empty list of strings");
  }
  std::vector<std::string> argv;
  for (const auto& arg : command) {
    if (!arg.IsScalar() || arg.Scalar().empty() || arg.Scalar().find('\0') != std::string::npos) {
      return Invalid("execution.command", "must be a non-empty list of strings");
    }
    argv.push_back(arg.Scalar());
  }
  const std::string& program = argv.front();
  const bool interpreter =
      std::find(std::begin(kAllowedInterpreters), std::end(kAllowedInterpreters), program) !=
      std::end(kAllowedInterpreters);
  if (!interpreter && (program.find('/') == std::string::npos || !InsidePackage(program))) {
    return Invalid("execution.command",
                   fmt::format("must start with a file of the package (./run.sh) or one of "
                               "python3, node, sh, bash; got \"{}\"",
                               program));
  }
  // An interpreter runs the package's own script and nothing else: no inline code (-c, -e,
  // --eval), no module of the system (-m), no script from elsewhere. Its options are set
  // through the environment instead (PYTHONUNBUFFERED is).
  if (interpreter && (argv.size() < 2 || argv[1].front() == '-' || !InsidePackage(argv[1]))) {
    return Invalid("execution.command",
                   fmt::format("{} must be followed by a script inside the package (no options, "
                               "no inline code)",
                               program));
  }
  return argv;
}

}  // namespace

bool ValidVersion(std::string_view v) {
  const auto dash = v.find('-');
  std::string_view numbers = v.substr(0, dash);
  if (dash != std::string_view::npos) {
    std::string_view suffix = v.substr(dash + 1);
    if (suffix.empty() || !std::all_of(suffix.begin(), suffix.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
        })) {
      return false;
    }
  }
  int parts = 0;
  std::size_t start = 0;
  while (start <= numbers.size()) {
    const auto dot = numbers.find('.', start);
    std::string_view part =
        numbers.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty() || part.size() > 9 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts >= 1 && parts <= 4;
}

bool ValidPluginIdPart(std::string_view part) {
  return !part.empty() && part.size() <= 64 && std::all_of(part.begin(), part.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

int CompareVersions(std::string_view a, std::string_view b) {
  auto split = [](std::string_view v) {
    const auto dash = v.find('-');
    std::vector<long long> numbers;
    std::string_view core = v.substr(0, dash);
    std::size_t start = 0;
    while (start <= core.size()) {
      const auto dot = core.find('.', start);
      std::string_view part = core.substr(start, dot == std::string_view::npos ? dot : dot - start);
      long long n = 0;
      std::from_chars(part.data(), part.data() + part.size(), n);
      numbers.push_back(n);
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    while (numbers.size() > 1 && numbers.back() == 0) numbers.pop_back();
    std::string_view suffix = dash == std::string_view::npos ? "" : v.substr(dash + 1);
    return std::pair{numbers, suffix};
  };
  auto [na, sa] = split(a);
  auto [nb, sb] = split(b);
  if (na != nb) return na < nb ? -1 : 1;
  if (sa == sb) return 0;
  if (sa.empty()) return 1;  // 1.0.0 > 1.0.0-beta
  if (sb.empty()) return -1;
  return sa < sb ? -1 : 1;
}

util::Result<PluginManifest> ParseManifest(std::string_view yaml_text) {
  // yaml-cpp passes invalid UTF-8 through into names and labels the API would then serve.
  if (!util::IsValidUtf8(yaml_text)) return Invalid("manifest.yaml", "is not valid UTF-8");
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return util::Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("manifest: not valid YAML (line {}): {}", e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) return Invalid("manifest.yaml", "must be a mapping");
  if (auto kind = OptionalString(root, "kind"); !kind.empty() && kind != "Plugin") {
    return Invalid("kind", "must be Plugin");
  }
  const YAML::Node metadata = root["metadata"];
  if (!metadata || !metadata.IsMap()) return Invalid("metadata", "is required");

  PluginManifest m;
  auto author = RequiredString(metadata, "author", "metadata.author");
  if (!author) return tl::unexpected(author.error());
  if (!ValidPluginIdPart(*author)) {
    return Invalid("metadata.author", "must be 1-64 letters, digits, '_' or '-'");
  }
  m.author = std::move(*author);
  auto name = RequiredString(metadata, "name", "metadata.name");
  if (!name) return tl::unexpected(name.error());
  if (!ValidPluginIdPart(*name)) {
    return Invalid("metadata.name", "must be 1-64 letters, digits, '_' or '-'");
  }
  m.name = std::move(*name);
  auto version = RequiredString(metadata, "version", "metadata.version");
  if (!version) return tl::unexpected(version.error());
  if (!ValidVersion(*version)) return Invalid("metadata.version", "must look like 1.2.3");
  m.version = std::move(*version);
  auto label = I18nText(metadata, "label", "metadata.label");
  if (!label) return tl::unexpected(label.error());
  m.label = std::move(*label);
  if (m.label.empty()) m.label["en_US"] = m.name;
  auto description = I18nText(metadata, "description", "metadata.description");
  if (!description) return tl::unexpected(description.error());
  m.description = std::move(*description);
  m.icon = OptionalString(metadata, "icon");
  if (!m.icon.empty() && !InsidePackage(m.icon)) {
    return Invalid("metadata.icon", "must be a path inside the package");
  }
  m.repository = OptionalString(metadata, "repository");

  const YAML::Node spec = root["spec"];
  if (spec && spec.IsMap() && spec["config"] && !spec["config"].IsNull()) {
    util::Json config = YamlToJson(spec["config"]);
    if (!config.is_array()) return Invalid("spec.config", "must be a list of config items");
    for (std::size_t i = 0; i < config.as_array().size(); ++i) {
      const auto& item = config.as_array()[i];
      const auto* object = item.if_object();
      const auto* item_name = object ? object->if_contains("name") : nullptr;
      const auto* type = object ? object->if_contains("type") : nullptr;
      if (!item_name || !item_name->is_string() || item_name->as_string().empty() || !type ||
          !type->is_string()) {
        return Invalid(fmt::format("spec.config[{}]", i), "needs a name and a type");
      }
    }
    m.config = std::move(config.as_array());
  }

  auto command = Command(root);
  if (!command) return tl::unexpected(command.error());
  m.command = std::move(*command);
  const YAML::Node network = root["execution"]["network"];
  if (network) {
    if (!network.IsScalar() || (network.Scalar() != "true" && network.Scalar() != "false")) {
      return Invalid("execution.network", "must be true or false");
    }
    m.network = network.Scalar() == "true";
  }
  return m;
}

}  // namespace sb::plugins
