// Whether the bot answers a message at all: LangBot's group respond rules (at, prefix, regexp,
// random; any one suffices, tried in that order). Private messages always get an answer.
//   UniformRandomSource random;
//   TriggerDecision d = DecideTrigger(query, random);
//   if (d.respond) run_pipeline(d.text, d.chain);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "domain/message.hpp"
#include "pipeline/query.hpp"
#include "util/json.hpp"

namespace sb::pipeline {

class PatternList;  // pipeline/pattern_list.hpp (Boost.Regex stays out of this header)

// A number in [0, 1) per call; injectable so tests fix the outcome of the random rule.
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // Thread-safe in every implementation.
  virtual double Next() = 0;
};

// A per-thread Mersenne Twister seeded from std::random_device.
class UniformRandomSource final : public RandomSource {
 public:
  double Next() override;
};

enum class TriggerRule { kNone, kPrivate, kAt, kPrefix, kRegexp, kRandom };
const char* TriggerRuleName(TriggerRule rule);

// trigger.group-respond-rules (defaults: at false, no prefixes, no regexps, random 0).
struct TriggerSettings {
  bool at = false;
  std::vector<std::string> prefixes;  // empty entries dropped (with a warning)
  std::shared_ptr<const PatternList> regexps;
  double random = 0.0;
  // trigger.misc.combine-quote-message (default true): the text of a message the user quoted
  // goes to the runner with the user's own.
  bool combine_quote = true;
  // Skipped prefixes and invalid regexps, for the bot's log when a message reaches that rule.
  std::vector<std::string> prefix_warnings;
  std::vector<std::string> regexp_warnings;

  static TriggerSettings Read(const util::JsonObject& config);
};

struct TriggerDecision {
  bool respond = false;
  TriggerRule rule = TriggerRule::kNone;
  // The message as the rest of the pipeline should see it: with the matched prefix removed, or
  // with the bot's At elements removed when the at rule matched.
  std::string text;
  domain::MessageChain chain;
  // Invalid regexps and skipped entries, for the bot's log.
  std::vector<std::string> warnings;
};

// Applies the query's trigger settings. `random` is only consulted when the other rules did not
// match and the configured probability is above 0.
TriggerDecision DecideTrigger(const Query& query, RandomSource& random);

}  // namespace sb::pipeline
