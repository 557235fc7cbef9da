// The webhook front door both WeCom adapters share (internal app and customer service): the GET
// URL-verification echo, and for a POST the checks that come before anything else, in order:
// method, body size, timestamp freshness, msg_signature over <Encrypt>, decryption with the
// receive id (the corp id) checked, then the inner XML's fields. Pure; the adapters decide what
// the fields mean.
//   auto opened = OpenCallback(endpoint, call, clock.Now());
//   if (opened.answer) { if (!opened.log.empty()) Log(opened.log); return answer(*opened.answer); }
//   use(opened.fields);
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "domain/platform_call.hpp"
#include "platforms/common/wechat_callback.hpp"
#include "util/clock.hpp"

namespace sb::platforms::wecom {

// A callback body is a small XML envelope; anything larger is not WeCom's.
inline constexpr std::size_t kMaxCallbackBytes = 256 * 1024;
// How far a callback's timestamp may be from our clock (a replayed capture is older).
inline constexpr std::chrono::seconds kTimestampWindow{300};

struct OpenedCallback {
  // Set when the call is answered without looking at its fields: the verification echo, or a
  // refusal (405, 413, 401 forged/stale/wrong receive id, 400 malformed).
  std::optional<domain::PlatformAnswer> answer;
  // For the bot's log when the call was refused for a reason worth recording; never a secret.
  std::string log;
  common::WeChatFields fields;  // the decrypted message's fields when `answer` is empty
};

OpenedCallback OpenCallback(const common::WeChatEndpoint& endpoint,
                            const domain::PlatformCall& call, util::TimePoint now);

// What WeCom takes as "received, do not retry": an empty 200 (its docs allow an empty string).
domain::PlatformAnswer Acknowledged();

}  // namespace sb::platforms::wecom
