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

// output.misc.remove-think (default false).
bool RemoveThinkEnabled(const util::JsonObject& config);

// Removes every "<think>...</think>" block. Beyond LangBot (which only removes closed blocks):
// an unterminated "<think>" drops the rest of the text, because a reply cut off mid-reasoning
// must not show the reasoning; a "</think>" with no opening tag before it drops everything up
// to it, because some model templates put the opening tag in the prompt. When anything was
// removed, surrounding whitespace is trimmed.
std::string RemoveThink(std::string_view text);

// Elements to put before the reply: a Quote of the incoming message when output.misc.quote-origin
// is true (default false) and the incoming chain has a Source id, then an At of the sender in
// group chats when output.misc.at-sender is true (default true).
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
LongTextDecision CheckLongText(const util::JsonObject& config, const domain::MessageChain& reply);

// The text to send when the run failed, per output.misc.exception-handling: "show-hint"
// (default) gives failure-hint (default "Request failed."), "show-error" the error text itself,
// "hide" nothing.
std::optional<std::string> FailureReply(const util::JsonObject& config,
                                        std::string_view error_text);

}  // namespace sb::pipeline
