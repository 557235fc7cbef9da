#include "pipeline/content_filter.hpp"

#include <utility>

#include "pipeline/config_values.hpp"
#include "pipeline/query.hpp"

namespace sb::pipeline {
namespace {

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  std::size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

bool Enabled(const util::JsonObject& config, std::string_view skipped_scope) {
  if (!GetBool(config, {"safety", "content-filter", "check-sensitive-words"}, false)) return false;
  return GetString(config, {"safety", "content-filter", "scope"}, "all") != skipped_scope;
}

}  // namespace

BanWordFilter::BanWordFilter(BanWordList list)
    : patterns_(PatternList::Compile(list.words, warnings_)),
      mask_(std::move(list.mask)),
      mask_word_(std::move(list.mask_word)) {}

bool BanWordFilter::Mask(std::string& text) const {
  return patterns_.ReplaceAll(text, [this](std::string_view match) {
    if (!mask_word_.empty()) return mask_word_;
    std::string masked;
    for (std::size_t i = CodePointCount(match); i > 0; --i) masked += mask_;
    return masked;
  });
}

const char* FilterActionName(FilterAction action) {
  switch (action) {
    case FilterAction::kPass:
      return "pass";
    case FilterAction::kMask:
      return "mask";
    case FilterAction::kBlock:
      return "block";
  }
  return "pass";
}

FilterSettings FilterSettings::Read(const util::JsonObject& config) {
  return {.incoming = Enabled(config, "output-msg"), .outgoing = Enabled(config, "income-msg")};
}

FilterDecision FilterIncoming(const FilterSettings& settings, const BanWordFilter& filter,
                              const domain::MessageChain& chain, std::string_view text) {
  FilterDecision decision;
  decision.text = std::string(text);
  if (!settings.incoming || HasNonTextElements(chain)) return decision;
  std::string checked(Trim(text));
  if (filter.Mask(checked)) {
    // LangBot interrupts on MASKED as well as BLOCK before the model sees the message.
    decision.action = FilterAction::kBlock;
    decision.text.clear();
    decision.user_notice = std::string(kBanWordNotice);
  }
  return decision;
}

FilterDecision FilterOutgoing(const FilterSettings& settings, const BanWordFilter& filter,
                              std::string_view reply) {
  FilterDecision decision;
  if (!settings.outgoing) {
    decision.text = std::string(reply);
    return decision;
  }
  decision.text = std::string(Trim(reply));
  if (filter.Mask(decision.text)) decision.action = FilterAction::kMask;
  return decision;
}

}  // namespace sb::pipeline
