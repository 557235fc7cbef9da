// The wire format of the generic `webhook` adapter: request signing and verification, the inbound
// message body, and the outbound callback body. Pure functions, no I/O; docs/webhook.md is the
// integrator-facing description of the same format.
//   if (!Verify(secret, body, sig_header, ts_header, clock.Now())) return Unauthenticated();
//   auto msg = DecodeInbound(body);  // kInvalidArgument naming the field on bad input
//   std::string callback_body = EncodeOutbound(reply, bot_uuid, msg->message_id);
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "domain/message.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::webhook {

inline constexpr std::string_view kTimestampHeader = "X-Switchboard-Timestamp";
inline constexpr std::string_view kSignatureHeader = "X-Switchboard-Signature";

// Five minutes, as Slack and Stripe use: wide enough for ordinary clock drift, narrow enough that
// a captured request cannot be replayed much later.
inline constexpr std::chrono::seconds kDefaultMaxSkew{300};

// Bounds on inbound bodies, so one request cannot make us hold or log unbounded strings. The whole
// body is already capped by the HTTP layer; base64 payloads are bounded only by that cap.
inline constexpr std::size_t kMaxElements = 100;
inline constexpr std::size_t kMaxTextBytes = 64 * 1024;
inline constexpr std::size_t kMaxIdBytes = 256;
inline constexpr std::size_t kMaxNameBytes = 256;
inline constexpr std::size_t kMaxUrlBytes = 8 * 1024;

// "sha256=" + lowercase hex of HMAC-SHA256(secret, body). The primitive only: requests are signed
// with SignTimestamped so that the signature also covers the time.
std::string Sign(std::string_view secret, std::string_view body);

// Sign(secret, "<unix_seconds>.<body>"): the value of the signature header for a request whose
// timestamp header is `unix_seconds` in decimal.
std::string SignTimestamped(std::string_view secret, std::int64_t unix_seconds,
                            std::string_view body);

// True only if `timestamp_header` is a decimal unix time within `max_skew` of `now` (either way)
// and `signature_header` equals SignTimestamped(secret, timestamp, body). An empty secret never
// verifies: anyone could compute its MAC. The comparison is constant-time. Never throws.
bool Verify(std::string_view secret, std::string_view body, std::string_view signature_header,
            std::string_view timestamp_header, util::TimePoint now,
            std::chrono::seconds max_skew = kDefaultMaxSkew);

// A message a remote backend posted to POST /bots/{bot_uuid}.
struct InboundMessage {
  std::string message_id;
  std::string sender_id;
  std::string sender_name;  // empty when the body has none
  domain::TargetType chat_type = domain::TargetType::kPerson;
  std::string chat_id;
  domain::MessageChain chain;  // 1 to kMaxElements elements, never a Source element
  std::int64_t timestamp = 0;  // the sender's unix seconds; 0 when the body has none
};

// Parses and validates an inbound body. Fails with kInvalidArgument whose message starts with the
// offending field ("sender.id", "message_chain[2].type", ...). Unknown fields are ignored so that
// senders can add their own.
util::Result<InboundMessage> DecodeInbound(std::string_view body);

// The callback body for `msg`: {"bot_uuid","target":{"type","id"},"reply_to"?,"message_chain"}.
// Each element carries only the fields its type uses; "reply_to" is left out when empty. Call
// CheckDeliverable first: this function encodes whatever it is given.
std::string EncodeOutbound(const domain::OutgoingMessage& msg, std::string_view bot_uuid,
                           std::string_view reply_to_message_id);

// kInvalidArgument naming the first element the webhook cannot carry (a Source element, an Image
// or Voice with neither url nor base64, a File without url, an At without target, a Quote without
// id), or an empty target id or chain. Sizes are not capped: the receiver sets its own limits.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& msg);

// A callback body decoded back, for test fakes of the integrator's side.
struct OutboundMessage {
  std::string bot_uuid;
  std::string reply_to;  // empty when absent
  domain::OutgoingMessage message;
};

// The inverse of EncodeOutbound, with the same per-element rules as DecodeInbound but no size
// bounds (we do not cap what we send).
util::Result<OutboundMessage> DecodeOutbound(std::string_view body);

}  // namespace sb::platforms::webhook
