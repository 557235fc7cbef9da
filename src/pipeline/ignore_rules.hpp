// LangBot's ignore rules: a message whose text starts with one of the prefixes, or in which one
// of the regexps is found, is dropped silently.
//   IgnoreDecision d = CheckIgnore(query.Config(), trigger.text);
//   if (d.ignore) return;  // no reply, no notice
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

namespace sb::pipeline {

class PatternList;  // pipeline/pattern_list.hpp (Boost.Regex stays out of this header)

struct IgnoreDecision {
  bool ignore = false;
  std::vector<std::string> warnings;  // invalid regexps and skipped entries
};

// trigger.ignore-rules.prefix / .regexp.
struct IgnoreSettings {
  std::vector<std::string> prefixes;  // "" would ignore every message: dropped with a warning
  std::shared_ptr<const PatternList> regexps;
  std::vector<std::string> warnings;  // invalid regexps and skipped entries

  static IgnoreSettings Read(const util::JsonObject& config);
};

// `text` is the message after the trigger stage (LangBot checks it there, stripped of
// surrounding whitespace, with Python's re.search).
IgnoreDecision CheckIgnore(const IgnoreSettings& settings, std::string_view text);

}  // namespace sb::pipeline
