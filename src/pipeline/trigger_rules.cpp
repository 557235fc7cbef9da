#include "pipeline/trigger_rules.hpp"

#include <algorithm>
#include <random>

#include "pipeline/config_values.hpp"
#include "pipeline/pattern_list.hpp"
#include "pipeline/stage_settings.hpp"

namespace sb::pipeline {
namespace {

// Removes `count` bytes of Plain text from the front of the chain, across Plain elements, so the
// chain stays consistent with the stripped text.
void StripPlainPrefix(domain::MessageChain& chain, std::size_t count) {
  for (auto& element : chain) {
    if (count == 0) return;
    if (element.type != domain::ElementType::kPlain) continue;
    std::size_t take = std::min(count, element.text.size());
    element.text.erase(0, take);
    count -= take;
  }
}

std::size_t LeadingSpace(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
    ++i;
  }
  return i;
}

}  // namespace

double UniformRandomSource::Next() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

const char* TriggerRuleName(TriggerRule rule) {
  switch (rule) {
    case TriggerRule::kNone:
      return "none";
    case TriggerRule::kPrivate:
      return "private";
    case TriggerRule::kAt:
      return "at";
    case TriggerRule::kPrefix:
      return "prefix";
    case TriggerRule::kRegexp:
      return "regexp";
    case TriggerRule::kRandom:
      return "random";
  }
  return "none";
}

TriggerSettings TriggerSettings::Read(const util::JsonObject& config) {
  constexpr std::string_view kRules = "group-respond-rules";
  TriggerSettings s;
  s.at = GetBool(config, {"trigger", kRules, "at"}, false);
  for (std::string& prefix : GetStringList(config, {"trigger", kRules, "prefix"})) {
    if (prefix.empty()) {
      s.prefix_warnings.push_back("an empty respond prefix was skipped");
      continue;
    }
    s.prefixes.push_back(std::move(prefix));
  }
  s.regexps = std::make_shared<const PatternList>(PatternList::Compile(
      GetStringList(config, {"trigger", kRules, "regexp"}), s.regexp_warnings));
  s.random = GetNumber(config, {"trigger", kRules, "random"}, 0.0);
  s.combine_quote = GetBool(config, {"trigger", "misc", "combine-quote-message"}, true);
  return s;
}

TriggerDecision DecideTrigger(const Query& query, RandomSource& random) {
  TriggerDecision decision;
  decision.text = query.text;
  decision.chain = query.chain;
  if (query.launcher_type != LauncherType::kGroup) {
    decision.respond = true;
    decision.rule = TriggerRule::kPrivate;
    return decision;
  }

  const TriggerSettings& settings = query.Settings().trigger;

  // Only an At of the bot itself, as LangBot does: an @all announcement is not a question to it.
  const bool at_bot = std::any_of(query.chain.begin(), query.chain.end(), [&](const auto& e) {
    return e.type == domain::ElementType::kAt && !query.bot_account_id.empty() &&
           e.target == query.bot_account_id;
  });
  if (settings.at && at_bot) {
    // LangBot removes the bot's At (twice, because a reply to the bot carries it twice); AtAll
    // stays, it addresses everyone.
    std::erase_if(decision.chain, [&](const domain::MessageElement& e) {
      return e.type == domain::ElementType::kAt && !query.bot_account_id.empty() &&
             e.target == query.bot_account_id;
    });
    decision.respond = true;
    decision.rule = TriggerRule::kAt;
    return decision;
  }

  // Adapters that turn a leading mention into text often leave a space behind; the prefix is
  // looked for after it, which LangBot (matching the raw text) does not do.
  std::size_t lead = LeadingSpace(query.text);
  std::string_view text = std::string_view(query.text).substr(lead);
  decision.warnings = settings.prefix_warnings;
  for (const std::string& prefix : settings.prefixes) {
    if (text.starts_with(prefix)) {
      decision.text = std::string(text.substr(prefix.size()));
      StripPlainPrefix(decision.chain, lead + prefix.size());
      decision.respond = true;
      decision.rule = TriggerRule::kPrefix;
      return decision;
    }
  }

  decision.warnings.insert(decision.warnings.end(), settings.regexp_warnings.begin(),
                           settings.regexp_warnings.end());
  if (settings.regexps && settings.regexps->MatchAtStart(query.text)) {
    decision.respond = true;
    decision.rule = TriggerRule::kRegexp;
    return decision;
  }

  if (settings.random > 0.0 && random.Next() < settings.random) {
    decision.respond = true;
    decision.rule = TriggerRule::kRandom;
  }
  return decision;
}

}  // namespace sb::pipeline
