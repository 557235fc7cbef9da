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

IgnoreDecision CheckIgnore(const util::JsonObject& config, std::string_view text) {
  IgnoreDecision decision;
  text = TrimSpace(text);
  for (const std::string& prefix : GetStringList(config, {"trigger", "ignore-rules", "prefix"})) {
    // "" would ignore every message; in a console list it is an unfilled row.
    if (prefix.empty()) {
      decision.warnings.push_back("an empty ignore prefix was skipped");
      continue;
    }
    if (text.starts_with(prefix)) {
      decision.ignore = true;
      return decision;
    }
  }
  PatternList regexps = PatternList::Compile(
      GetStringList(config, {"trigger", "ignore-rules", "regexp"}), decision.warnings);
  decision.ignore = regexps.Search(text);
  return decision;
}

}  // namespace sb::pipeline
