// KOOK messages both ways and its REST answers, as the adapter sees them: a gateway message event
// (signal 0's `d`) turned into a ReceivedMessage, the shared message model turned into
// message/create or direct-message/create calls, and the {code, message, data} envelope. Pure
// functions, no I/O; kook_rest.cpp makes the calls, kook_signals.hpp has the gateway frames.
//   auto decoded = DecodeMessageEvent(d, bot_id);  // nullopt message: not for the bot
//   auto calls = EncodeOutgoing(message);           // texts (KMarkdown) and images, in order
//   auto data = DecodeEnvelope(status, body);       // `data`, or the refusal as an Error
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::kook {

// message/create's content limit (platforms.md 1b: 8000), counted here in code points.
inline constexpr std::size_t kMaxContentChars = 8000;
// Message types (event `type` and message/create `type`).
inline constexpr int kTypeText = 1;
inline constexpr int kTypeImage = 2;
inline constexpr int kTypeVideo = 3;
inline constexpr int kTypeFile = 4;
inline constexpr int kTypeAudio = 8;
inline constexpr int kTypeKMarkdown = 9;
inline constexpr int kTypeCard = 10;
inline constexpr int kTypeSystem = 255;

// A message event for the host. `message` is empty for what the bot does not take: its own and
// other bots' messages, system events (type 255), cards, BROADCAST and messages with nothing in
// them.
struct DecodedEvent {
  std::optional<domain::ReceivedMessage> message;
  std::string msg_id;  // for de-duplication, also when `message` is empty
};

// Turns an event `d` into a ReceivedMessage. channel_type PERSON is a private chat whose chat_id is
// the author; GROUP is a group chat whose chat_id is the channel (target_id). The chain is
// Source{msg_id}, Quote{id} when the message quotes one, then by type: text and KMarkdown content
// split around `(met)id(met)` (At{id}; `all` and `here` give AtAll) with `(rol)id(rol)` and
// `(chn)id(chn)` dropped and KMarkdown's backslash escapes undone; an image's Image{url}; a file or
// video File{url, name}; audio Voice{url}. When `extra.mention` names the bot but the content does
// not, an At{bot} leads the text. kInvalidArgument naming the field for a malformed event.
util::Result<DecodedEvent> DecodeMessageEvent(const util::Json& d, std::string_view bot_id);

// kInvalidArgument naming "message_chain[i]" for an element KOOK cannot carry (Image without an
// http(s) url or valid base64, File without url, At without a target), a target_id that is empty
// or has characters ids do not have, or a chain with nothing to show.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// One create call, in order. A text is KMarkdown (type 9) with At as `(met)id(met)` and AtAll as
// `(met)all(met)`; an image is uploaded through asset/create first (from `image_bytes`, or from
// the bytes fetched at `image_url`) and then sent as type 2 with the asset URL as content.
struct OutboundCall {
  int type = kTypeKMarkdown;
  std::string content{};      // texts
  std::string image_url{};    // images given by URL: fetched, then uploaded
  std::string image_bytes{};  // images given as base64
  std::string image_mime{};   // of image_bytes, "image/png" when unknown
};

// The calls that deliver `message` (which passed CheckDeliverable): Plain (KMarkdown mention
// syntax in it escaped, so a reply cannot ping anyone), At, AtAll and the links of File and Voice
// elements make texts, cut at kMaxContentChars; each Image makes its own call where it stands.
std::vector<OutboundCall> EncodeOutgoing(const domain::OutgoingMessage& message);

// The create body: {target_id, content, type, quote?}.
util::JsonObject EncodeCreateBody(std::string_view target_id, const OutboundCall& call,
                                  std::string_view content, std::string_view quote);

// The first Quote element's id, when the chain has one.
std::string QuotedId(const domain::MessageChain& chain);

// A multipart/form-data body with one part `file` (asset/create).
std::string EncodeAssetUpload(std::string_view bytes, std::string_view mime,
                              std::string_view boundary);

// `data` of a REST answer {code, message, data} when the HTTP status is 2xx and code is 0.
// Otherwise: HTTP 401/403 or code 401/403 -> kUpstreamAuth (final); HTTP 429 ->
// kUpstreamRateLimited; anything else kUpstreamFailed; each message names KOOK's own message.
util::Result<util::Json> DecodeEnvelope(int status, std::string_view body);

// user/me's `data`: the bot's id and name. kUpstreamFailed without an id.
struct BotUser {
  std::string id;
  std::string username;
};
util::Result<BotUser> DecodeUserMe(const util::Json& data);

// message/create's and direct-message/create's msg_id; asset/create's url. kUpstreamFailed when
// absent.
util::Result<std::string> DecodeMsgId(const util::Json& data);
util::Result<std::string> DecodeAssetUrl(const util::Json& data);

// KOOK ids are decimal user/channel ids or UUID-like message ids: letters, digits and '-'.
bool IsKookId(std::string_view s);

}  // namespace sb::platforms::kook
