// LangBot's ignore rules: a message whose text starts with one of the prefixes, or in which one
// of the regexps is found, is dropped silently.
//   IgnoreDecision d = CheckIgnore(query.Config(), trigger.text);
//   if (d.ignore) return;  // no reply, no notice
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

namespace sb::pipeline {

struct IgnoreDecision {
  bool ignore = false;
  std::vector<std::string> warnings;  // invalid regexps and skipped entries
};

// Reads trigger.ignore-rules.prefix / .regexp. `text` is the message after the trigger stage
// (LangBot checks it there, stripped of surrounding whitespace, with Python's re.search).
IgnoreDecision CheckIgnore(const util::JsonObject& config, std::string_view text);

}  // namespace sb::pipeline
