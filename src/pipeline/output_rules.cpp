#include "pipeline/output_rules.hpp"

#include "pipeline/config_values.hpp"
#include "pipeline/pattern_list.hpp"
#include "pipeline/stage_settings.hpp"

namespace sb::pipeline {
namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  std::size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

}  // namespace

OutputSettings OutputSettings::Read(const util::JsonObject& config) {
  OutputSettings s;
  s.remove_think = GetBool(config, {"output", "misc", "remove-think"}, false);
  s.quote_origin = GetBool(config, {"output", "misc", "quote-origin"}, false);
  s.at_sender = GetBool(config, {"output", "misc", "at-sender"}, true);
  s.track_function_calls = GetBool(config, {"output", "misc", "track-function-calls"}, false);
  s.long_text_threshold = GetInt(config, {"output", "long-text-processing", "threshold"}, 1000);
  if (s.long_text_threshold < 0) s.long_text_threshold = 1000;
  s.long_text_strategy = GetString(config, {"output", "long-text-processing", "strategy"}, "none");
  s.exception_handling = GetString(config, {"output", "misc", "exception-handling"}, "show-hint");
  s.failure_hint = GetString(config, {"output", "misc", "failure-hint"}, "Request failed.");
  return s;
}

std::string RemoveThink(std::string_view text) {
  bool removed = false;
  std::size_t open = text.find(kOpen);
  std::size_t close = text.find(kClose);
  if (close != std::string_view::npos && (open == std::string_view::npos || close < open)) {
    text.remove_prefix(close + kClose.size());
    removed = true;
  }
  std::string out;
  while (true) {
    open = text.find(kOpen);
    if (open == std::string_view::npos) {
      out.append(text);
      break;
    }
    out.append(text.substr(0, open));
    removed = true;
    close = text.find(kClose, open + kOpen.size());
    if (close == std::string_view::npos) break;
    text.remove_prefix(close + kClose.size());
  }
  return removed ? std::string(Trim(out)) : out;
}

domain::MessageChain ReplyPrefix(const Query& query) {
  const OutputSettings& settings = query.Settings().output;
  domain::MessageChain prefix;
  if (settings.quote_origin) {
    for (const auto& element : query.chain) {
      if (element.type == domain::ElementType::kSource && !element.id.empty()) {
        domain::MessageElement quote;
        quote.type = domain::ElementType::kQuote;
        quote.id = element.id;
        prefix.push_back(std::move(quote));
        break;
      }
    }
  }
  if (query.launcher_type == LauncherType::kGroup && !query.sender_id.empty() &&
      settings.at_sender) {
    domain::MessageElement at;
    at.type = domain::ElementType::kAt;
    at.target = query.sender_id;
    prefix.push_back(std::move(at));
  }
  return prefix;
}

const char* LongTextActionName(LongTextAction action) {
  switch (action) {
    case LongTextAction::kSend:
      return "send";
    case LongTextAction::kForward:
      return "forward";
    case LongTextAction::kImageUnsupported:
      return "image-unsupported";
  }
  return "send";
}

LongTextDecision CheckLongText(const OutputSettings& settings, const domain::MessageChain& reply) {
  LongTextDecision decision;
  decision.threshold = settings.long_text_threshold;
  std::string text;
  for (const auto& element : reply) {
    if (element.type != domain::ElementType::kPlain) return decision;
    text += element.text;
  }
  decision.length = static_cast<std::int64_t>(CodePointCount(text));
  if (decision.length <= decision.threshold) return decision;
  const std::string& strategy = settings.long_text_strategy;
  if (strategy == "forward") {
    decision.action = LongTextAction::kForward;
  } else if (strategy == "image") {
    decision.action = LongTextAction::kImageUnsupported;
  }
  return decision;
}

std::optional<std::string> FailureReply(const OutputSettings& settings,
                                        std::string_view error_text) {
  if (settings.exception_handling == "hide") return std::nullopt;
  if (settings.exception_handling == "show-error") return std::string(error_text);
  return settings.failure_hint;
}

}  // namespace sb::pipeline
