#include "pipeline/output_rules.hpp"

#include "pipeline/config_values.hpp"
#include "pipeline/pattern_list.hpp"

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

bool RemoveThinkEnabled(const util::JsonObject& config) {
  return GetBool(config, {"output", "misc", "remove-think"}, false);
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
  const util::JsonObject& config = query.Config();
  domain::MessageChain prefix;
  if (GetBool(config, {"output", "misc", "quote-origin"}, false)) {
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
      GetBool(config, {"output", "misc", "at-sender"}, true)) {
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

LongTextDecision CheckLongText(const util::JsonObject& config, const domain::MessageChain& reply) {
  LongTextDecision decision;
  decision.threshold = GetInt(config, {"output", "long-text-processing", "threshold"}, 1000);
  if (decision.threshold < 0) decision.threshold = 1000;
  std::string text;
  for (const auto& element : reply) {
    if (element.type != domain::ElementType::kPlain) return decision;
    text += element.text;
  }
  decision.length = static_cast<std::int64_t>(CodePointCount(text));
  if (decision.length <= decision.threshold) return decision;
  std::string strategy = GetString(config, {"output", "long-text-processing", "strategy"}, "none");
  if (strategy == "forward") {
    decision.action = LongTextAction::kForward;
  } else if (strategy == "image") {
    decision.action = LongTextAction::kImageUnsupported;
  }
  return decision;
}

std::optional<std::string> FailureReply(const util::JsonObject& config,
                                        std::string_view error_text) {
  std::string mode = GetString(config, {"output", "misc", "exception-handling"}, "show-hint");
  if (mode == "hide") return std::nullopt;
  if (mode == "show-error") return std::string(error_text);
  return GetString(config, {"output", "misc", "failure-hint"}, "Request failed.");
}

}  // namespace sb::pipeline
