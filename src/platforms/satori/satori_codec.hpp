// Satori v1 as the adapter sees it (satori.chat protocol/events.html, api.html, resources): the
// event WebSocket's signals, READY's logins, `message-created` events turned into
// ReceivedMessages, the HTTP API's request bodies and answers, and where the bot's config says
// the server is. Pure functions, no I/O; satori_adapter.cpp does the I/O. Message content is
// satori_elements.hpp.
//   auto signal = DecodeSignal(text);              // {op, body}
//   if (signal->op == kOpReady) login = PickLogin(DecodeLogins(signal->body), "discord");
//   auto event = DecodeEvent(signal->body, *login); // a message for the host, or nothing
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::satori {

// Signal opcodes.
inline constexpr int kOpEvent = 0;
inline constexpr int kOpPing = 1;
inline constexpr int kOpPong = 2;
inline constexpr int kOpIdentify = 3;
inline constexpr int kOpReady = 4;
inline constexpr int kOpMeta = 5;

// Channel.Type.
inline constexpr std::int64_t kChannelText = 0;
inline constexpr std::int64_t kChannelDirect = 1;

// Where the server is. From `api_base_url` (the server's root, "/v1" appended; the events URL is
// the same with ws/wss) when set, else `satori_api_base_url` and `satori_endpoint`, else
// http://host:port/v1 and ws://host:port/v1/events. Trailing slashes are dropped.
struct Endpoints {
  std::string api;     // ".../v1"; calls go to api + "/message.create"
  std::string events;  // "ws://.../v1/events"
};
Endpoints EndpointsFromConfig(const util::JsonObject& config);

// {op, body}: kInvalidArgument unless the text is a JSON object with an integer `op`; a missing or
// null body reads as {}, any other non-object body is an error.
struct Signal {
  int op = -1;
  util::JsonObject body;
};
util::Result<Signal> DecodeSignal(std::string_view text);

// {"op":3,"body":{"token":…,"sn":…}}: the token only when not empty, sn only when known.
std::string EncodeIdentify(std::string_view token, std::optional<std::int64_t> sn);
// {"op":1,"body":{}}.
std::string EncodePing();

// One login of READY's `logins` (or an event's `login`).
struct Login {
  std::string platform;
  std::string user_id;
  std::string user_name;
};
// READY's logins; entries without platform or user.id are left out.
std::vector<Login> DecodeLogins(const util::JsonObject& ready_body);

// The login whose platform is `platform`; with `platform` empty, the only login there is.
// kNotFound naming the platforms on offer otherwise.
util::Result<Login> PickLogin(const std::vector<Login>& logins, std::string_view platform);

// What an EVENT carries for the adapter.
struct DecodedEvent {
  std::optional<std::int64_t> sn;  // for resuming; login events have none
  std::string type;
  // A message for the host: only for `message-created` of `self`'s platform and account, not
  // written by the bot itself, with something in it.
  std::optional<domain::ReceivedMessage> message;
  std::string channel_id;  // where an answer goes (the DM channel for a person)
};

// Turns an EVENT's body into a DecodedEvent. A direct channel (channel.type 1) is a private chat
// whose chat_id is the user; any other channel (type 0, or a guild given) is a group whose
// chat_id is the channel (LangBot's session ids: person_<user.id>, group_<channel.id>). The chain
// is Source{message.id} and then the decoded content. The sender's name is member.nick, else
// user.nick, else user.name. kInvalidArgument naming the field for a message-created event
// without channel.id, user.id or message.
util::Result<DecodedEvent> DecodeEvent(const util::JsonObject& body, const Login& self);

// API bodies.
std::string EncodeMessageCreate(std::string_view channel_id, std::string_view content);
std::string EncodeDirectChannelCreate(std::string_view user_id);

// message.create's answer: an array of Messages; the id of the last one (empty when none has
// one). kUpstreamFailed when the body is no JSON array or object.
util::Result<std::string> DecodeCreatedMessageId(std::string_view body);
// user.channel.create's answer: a Channel; kUpstreamFailed without a string `id`.
util::Result<std::string> DecodeChannelId(std::string_view body);

// kInvalidArgument naming "message_chain[i]" for an element Satori cannot carry (Image or Voice
// without url or base64, File without url, At without target), a chain with nothing to show, or
// a target_id that is empty, longer than 256 bytes or holds control characters.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

}  // namespace sb::platforms::satori
