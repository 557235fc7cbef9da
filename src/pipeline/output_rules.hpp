// How a reply is shaped before it is sent, per the pipeline's output settings: reasoning blocks
// removed, the sender mentioned and the message quoted in groups, long texts flagged, and the
// text shown when the run failed.
//   std::string reply = RemoveThinkEnabled(cfg) ? RemoveThink(raw) : raw;
//   domain::MessageChain head = ReplyPrefix(query);  // Quote / At to put before the reply
//   if (CheckLongText(cfg, chain).action == LongTextAction::kForward) ...
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "domain/message.hpp"
#include "pipeline/query.hpp"
#include "util/json.hpp"

namespace sb::pipeline {

// output.misc and output.long-text-processing.
struct OutputSettings {
  bool remove_think = false;          // output.misc.remove-think
  bool quote_origin = false;          // output.misc.quote-origin
  bool at_sender = true;              // output.misc.at-sender
  bool track_function_calls = false;  // output.misc.track-function-calls
  std::int64_t long_text_threshold = 1000;
  std::string long_text_strategy = "none";       // "none", "forward", "image"
  std::string exception_handling = "show-hint";  // "show-hint", "show-error", "hide"
  std::string failure_hint = "Request failed.";

  static OutputSettings Read(const util::JsonObject& config);
};

// Removes every "<think>...</think>" block. Beyond LangBot (which only removes closed blocks):
// an unterminated "<think>" drops the rest of the text, because a reply cut off mid-reasoning
// must not show the reasoning; a "</think>" with no opening tag before it drops everything up
// to it, because some model templates put the opening tag in the prompt. When anything was
// removed, surrounding whitespace is trimmed.
std::string RemoveThink(std::string_view text);

// Elements to put before the reply: a Quote of the incoming message when quote_origin is set and
// the incoming chain has a Source id, then an At of the sender in group chats when at_sender is.
domain::MessageChain ReplyPrefix(const Query& query);

enum class LongTextAction {
  kSend,              // short enough, strategy "none", or not plain text: send as it is
  kForward,           // send as a forward (merged) message
  kImageUnsupported,  // strategy "image": not supported here; the caller falls back
};
const char* LongTextActionName(LongTextAction action);

struct LongTextDecision {
  LongTextAction action = LongTextAction::kSend;
  std::int64_t length = 0;     // characters (code points), as LangBot counts
  std::int64_t threshold = 0;  // output.long-text-processing.threshold (default 1000)
};

// LangBot only processes a reply made of Plain elements whose text is longer than the threshold.
LongTextDecision CheckLongText(const OutputSettings& settings, const domain::MessageChain& reply);

// The text to send when the run failed, per exception_handling: "show-hint" gives failure_hint,
// "show-error" the error text itself, "hide" nothing.
std::optional<std::string> FailureReply(const OutputSettings& settings,
                                        std::string_view error_text);

}  // namespace sb::pipeline
