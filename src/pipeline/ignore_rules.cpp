#include "pipeline/ignore_rules.hpp"

#include "pipeline/config_values.hpp"
#include "pipeline/pattern_list.hpp"

namespace sb::pipeline {
namespace {

std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  std::size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  std::size_t end = text.find_last_not_of(kSpace);
  return text.substr(begin, end - begin + 1);
}

}  // namespace

IgnoreSettings IgnoreSettings::Read(const util::JsonObject& config) {
  IgnoreSettings s;
  for (std::string& prefix : GetStringList(config, {"trigger", "ignore-rules", "prefix"})) {
    // "" would ignore every message; in a console list it is an unfilled row.
    if (prefix.empty()) {
      s.warnings.push_back("an empty ignore prefix was skipped");
      continue;
    }
    s.prefixes.push_back(std::move(prefix));
  }
  s.regexps = std::make_shared<const PatternList>(PatternList::Compile(
      GetStringList(config, {"trigger", "ignore-rules", "regexp"}), s.warnings));
  return s;
}

IgnoreDecision CheckIgnore(const IgnoreSettings& settings, std::string_view text) {
  IgnoreDecision decision;
  decision.warnings = settings.warnings;
  text = TrimSpace(text);
  for (const std::string& prefix : settings.prefixes) {
    if (text.starts_with(prefix)) {
      decision.ignore = true;
      return decision;
    }
  }
  decision.ignore = settings.regexps && settings.regexps->Search(text);
  return decision;
}

}  // namespace sb::pipeline
