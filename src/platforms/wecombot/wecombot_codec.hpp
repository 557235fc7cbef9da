// The WeCom AI bot's (企业微信智能机器人, "wecombot") wire formats, pure and I/O-free: the callback
// JSON both modes share (webhook `{"encrypt"}` bodies decrypted, and the body of WebSocket
// `aibot_msg_callback` frames), the long connection's frames, the stream reply bodies and the
// encrypted webhook answer envelope. The adapter (wecombot_adapter.cpp) moves them.
//   auto cb = DecodeCallback(*util::ParseJson(plaintext), bot_id);
//   if (cb->kind == CallbackKind::kMessage) host.OnMessage(std::move(*cb->message));
//   link.Write(EncodeRespond(req_id, StreamBody(stream_id, "hello", true)));
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::wecombot {

// WeCom's limit on a stream's or a markdown message's content (bytes of UTF-8).
constexpr std::size_t kMaxContentBytes = 20480;
// Ids (msgid, userid, chatid, req_id, stream id) longer than this are refused as malformed.
constexpr std::size_t kMaxIdBytes = 256;

// Error codes of the long connection that the adapter acts on.
constexpr std::int64_t kErrInvalidReqId = 846605;   // the callback's req_id is no longer valid
constexpr std::int64_t kErrStreamExpired = 846608;  // a stream not finished within 6 minutes

enum class CallbackKind {
  kMessage,        // a user's message: text, markdown, mixed, image, voice, file, video
  kStreamRefresh,  // webhook: WeCom asks for the current state of one of our streams
  kEvent,          // enter_chat, feedback_event, template_card_event, disconnected_event, ...
};

// An image of a message, still to be downloaded and decrypted (AES-256-CBC; key = base64 of the
// per-message `aeskey`, or of EncodingAESKey when the callback has none).
struct PendingImage {
  std::size_t element = 0;  // index of its Image element in the message's chain
  std::string url;
  std::string aeskey;  // empty: use EncodingAESKey
};

struct Callback {
  CallbackKind kind = CallbackKind::kMessage;
  std::string msgid;
  std::string aibotid;
  std::string stream_id;   // kStreamRefresh
  std::string event_type;  // kEvent
  // kMessage: the message (Source{msgid}, At{aibotid} first in groups, where WeCom delivers only
  // @-messages, then text and images). Empty when it holds nothing the bot reads, with `skipped`.
  std::optional<domain::ReceivedMessage> message;
  std::string skipped;
  std::vector<PendingImage> images;
};

// Reads a decrypted callback. Private chats (`chattype` single) have the sender's userid as chat
// id; group chats the `chatid`. A group message's At names `bot_id` (the account id the adapter
// reported; the callback's `aibotid` when empty). kInvalidArgument naming the field for a wrong
// shape.
util::Result<Callback> DecodeCallback(const util::Json& body, std::string_view bot_id = {});

// One frame of the long connection: {"cmd", "headers": {"req_id"}, "body"} from WeCom, or an
// acknowledgement {"headers": {"req_id"}, "errcode", "errmsg"} (no cmd).
struct Frame {
  std::string cmd;
  std::string req_id;
  std::optional<std::int64_t> errcode;
  std::string errmsg;
  util::Json body;  // null when absent
};
util::Result<Frame> DecodeFrame(std::string_view text);

// A fresh request id "<prefix>_<unix ms>_<8 hex>", the form the SDKs use.
std::string NewReqId(std::string_view prefix, std::int64_t unix_ms);

std::string EncodeSubscribe(std::string_view req_id, std::string_view bot_id,
                            std::string_view secret);
std::string EncodePing(std::string_view req_id);
// `cmd` with {"headers": {"req_id"}, "body"}: aibot_respond_msg (req_id = the callback's) or
// aibot_send_msg (a new one).
std::string EncodeCommand(std::string_view cmd, std::string_view req_id,
                          const util::JsonObject& body);

// {"msgtype":"stream","stream":{"id","finish","content"}}: `content` is the whole reply so far.
util::JsonObject StreamBody(std::string_view stream_id, std::string_view content, bool finish);
// aibot_send_msg's body {"chatid","msgtype":"markdown","markdown":{"content"}}.
util::JsonObject SendMsgBody(std::string_view chat_id, std::string_view content);

// "errcode 846608 (stream message update expired)"; the errmsg is cut to a bounded length.
std::string DescribeAck(const Frame& ack);

// The passive webhook answer: {"encrypt","msgsignature","timestamp","nonce"} with `plaintext`
// encrypted for receive id "" and signed with `token`. kInvalidArgument for a bad key/prefix.
util::Result<std::string> EncodeEnvelope(std::string_view aes_key, std::string_view token,
                                         std::string_view plaintext, std::string_view timestamp,
                                         std::string_view nonce, std::string_view random16);

// Decrypts a downloaded image or file: AES-256-CBC with key = base64 of `aeskey` (padding may be
// missing), IV = key[0:16], PKCS#7 padding of at most 32 bytes. kInvalidArgument when the key is
// not 32 bytes or the data or padding is wrong.
util::Result<std::string> DecryptMedia(std::string_view aeskey, std::string_view data);

// A data: URL for decrypted image bytes, the type read from their magic numbers.
std::string ImageDataUrl(std::string_view bytes);

// kInvalidArgument naming "message_chain[i]" for what a WeCom AI bot reply cannot carry (Voice,
// an Image or File without an http(s) url), "target_id" for an empty or overlong id, or a chain
// with nothing to show.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// The markdown text of a deliverable chain: Plain as is, an Image or File as a link; At, AtAll,
// Quote and Source dropped (as LangBot does: a reply is shown as the answer to its asker, and the
// AI bot has no mention markup).
std::string RenderMarkdown(const domain::MessageChain& chain);

// Pieces of at most `max_bytes` bytes each, cut after the last line break that fits, else at a
// whole UTF-8 character. Empty for empty text.
std::vector<std::string> SplitBytes(std::string_view text, std::size_t max_bytes);

}  // namespace sb::platforms::wecombot
