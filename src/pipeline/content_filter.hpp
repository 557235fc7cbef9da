// LangBot's ban-word content filter. Incoming messages that contain a ban word are refused with a
// notice; outgoing replies have the ban words masked. The word list (regular expressions, as in
// LangBot's sensitive-words.json) is compiled once and shared by every pipeline.
//   BanWordFilter filter({.words = {"badword"}});
//   FilterDecision in = FilterIncoming(query.Config(), filter, query.chain, trigger.text);
//   if (in.action == FilterAction::kBlock) reply(in.user_notice);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "pipeline/pattern_list.hpp"
#include "util/json.hpp"

namespace sb::pipeline {

struct BanWordList {
  std::vector<std::string> words;  // regular expressions; plain words match as text
  std::string mask = "*";          // repeated once per character of the match...
  std::string mask_word;           // ...unless this is set, then it replaces the whole match
};

// Immutable after construction, so one instance may be used from any number of threads.
class BanWordFilter {
 public:
  BanWordFilter() = default;
  explicit BanWordFilter(BanWordList list);

  // Patterns that were skipped (invalid or over the limits), for the start-up log.
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Masks every ban word in `text`; returns whether one was found.
  bool Mask(std::string& text) const;

 private:
  // Declared first: the constructor fills it while compiling patterns_.
  std::vector<std::string> warnings_;
  PatternList patterns_;
  std::string mask_;
  std::string mask_word_;
};

enum class FilterAction { kPass, kMask, kBlock };
const char* FilterActionName(FilterAction action);

struct FilterDecision {
  FilterAction action = FilterAction::kPass;
  std::string text;         // the text to continue with (masked for kMask; empty for kBlock)
  std::string user_notice;  // what to tell the user for kBlock
};

// What LangBot says when an incoming message holds a ban word (English here; LangBot's is
// "消息中存在不合适的内容, 请修改").
inline constexpr std::string_view kBanWordNotice =
    "The message contains inappropriate content, please revise it.";

// safety.content-filter: check-sensitive-words (default false) and scope ("all", "income-msg",
// "output-msg").
struct FilterSettings {
  bool incoming = false;
  bool outgoing = false;

  static FilterSettings Read(const util::JsonObject& config);
};

// Income side: skipped unless `settings.incoming`, or when the chain holds anything but Plain and
// Source (LangBot's filters only read text). A ban word blocks the message.
FilterDecision FilterIncoming(const FilterSettings& settings, const BanWordFilter& filter,
                              const domain::MessageChain& chain, std::string_view text);

// Output side: skipped unless `settings.outgoing`. The reply is trimmed (as LangBot does) and ban
// words are masked; a reply is never blocked.
FilterDecision FilterOutgoing(const FilterSettings& settings, const BanWordFilter& filter,
                              std::string_view reply);

}  // namespace sb::pipeline
