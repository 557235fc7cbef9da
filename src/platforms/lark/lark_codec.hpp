// The Lark / Feishu Open Platform as the adapter sees it: event envelopes (webhook bodies, plain
// or under the Encrypt Key, and long-connection payloads), im.message.receive_v1 turned into a
// ReceivedMessage, the shared message model turned into im/v1 message contents, and the Open
// API's answers. Pure functions, no I/O; lark_adapter.cpp and lark_api.cpp make the calls.
//   auto envelope = DecodeEnvelope(call.body, encrypt_key);   // challenge or event
//   auto decoded = DecodeMessageEvent(envelope->event);        // p2p / group message
//   auto parts = EncodeOutgoing(outgoing);                      // text, post, image ...
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

namespace sb::platforms::lark {

inline constexpr std::string_view kDefaultBase = "https://open.feishu.cn";
// Bounds on what one event may make us hold.
inline constexpr std::size_t kMaxEventBytes = 1024 * 1024;
inline constexpr std::size_t kMaxIdBytes = 128;
inline constexpr std::size_t kMaxMentions = 100;
inline constexpr std::size_t kMaxImagesPerMessage = 9;
// Text is cut into messages of at most this many code points (a text message's body may be
// 150 KB; this keeps any UTF-8 under it).
inline constexpr std::size_t kMaxTextCodePoints = 30'000;

// What arrived on the webhook route or the long connection, decrypted and classified.
struct Envelope {
  enum class Kind { kChallenge, kEvent };
  Kind kind = Kind::kEvent;
  std::string challenge;   // kChallenge
  std::string token;       // the Verification Token it carries (header.token or token)
  std::string event_id;    // header.event_id (2.0) or uuid (1.0); the redelivery key
  std::string event_type;  // header.event_type (2.0) or event.type (1.0)
  util::JsonObject event;  // kEvent: the `event` object
};

// Decodes a body. `{"encrypt": ...}` is decrypted with `encrypt_key` first (kUnauthenticated
// when no key is configured or it does not decrypt: only Lark knows the key). With a key set, a
// body that is not encrypted is kUnauthenticated too (Lark encrypts everything then).
// kInvalidArgument naming the field for malformed JSON, a non-object, or a shape that is neither
// a url_verification nor a 1.0 / 2.0 event.
util::Result<Envelope> DecodeEnvelope(std::string_view body, std::string_view encrypt_key);

// An image of a received message still to be fetched from
// /open-apis/im/v1/messages/{message_id}/resources/{image_key}?type=image.
struct PendingImage {
  std::size_t element = 0;  // index into the message's chain
  std::string image_key;
};

struct DecodedMessage {
  // Empty for messages the bot does not take (from an app or bot, other message types, other
  // chat types), with `skipped` saying why.
  std::optional<domain::ReceivedMessage> message;
  std::string skipped;
  std::vector<PendingImage> images;
};

// Turns an im.message.receive_v1 `event` into a ReceivedMessage as LangBot does: p2p is a private
// chat with the sender's open_id as chat id, group a group chat with message.chat_id. The chain
// is Source{message_id}, Quote{parent_id} when it replies, then the content: text with each
// `@_user_N` key that `mentions` names turned into At{open_id} (`@_all` into AtAll); a post's
// paragraphs (text, a, at, img, md, code_block) as lines; an image (pending). kInvalidArgument
// naming the field for a wrong shape (content that is not a JSON string of an object, missing
// ids, ids over kMaxIdBytes).
util::Result<DecodedMessage> DecodeMessageEvent(const util::JsonObject& event);

// What a reply quotes, read from GET /open-apis/im/v1/messages/{parent_id} ("获取指定消息的内容").
struct QuotedMessage {
  std::string text;       // cut to domain::kMaxQuotedTextBytes; empty when unreadable
  std::string sender_id;  // items[0].sender.id
};
// `data` is that answer's data: items[0]'s text (a text message's, a post's lines, "[Image]" for
// an image, "[<msg_type>]" for the rest), mentions shown as "@id". A wrong shape gives an empty
// text: the quote is context, never a reason to drop the message.
QuotedMessage DecodeQuotedMessage(const util::JsonObject& data);

// The Open API's common answer {"code", "msg", "data"}: data when code is 0.
struct ApiAnswer {
  std::int64_t code = -1;
  std::string msg;
  util::JsonObject data;
};
// kUpstreamFailed when the body is not such an object (the HTTP status is named).
util::Result<ApiAnswer> DecodeApiAnswer(int http_status, std::string_view body);
// True for the codes that mean the access token is missing, invalid or expired (refetch it and
// try once more): 99991661, 99991663, 99991664, 99991668, 99991671, 99991677.
bool IsTokenError(std::int64_t code);
// True for Lark's rate-limit code 99991400 (also sent with HTTP 429).
bool IsRateLimited(int http_status, std::int64_t code);
// "code 230002: Bot/User can NOT be out of the chat." bounded to 300 bytes.
std::string DescribeAnswer(int http_status, const ApiAnswer& answer);

// /open-apis/auth/v3/tenant_access_token/internal: the token sits beside code, not in data.
struct TenantToken {
  std::string token;
  std::int64_t expire_seconds = 0;
};
util::Result<TenantToken> DecodeTenantToken(int http_status, std::string_view body);

// /open-apis/bot/v3/info: {"code":0,"bot":{"open_id","app_name",...}}.
struct BotInfo {
  std::string open_id;
  std::string app_name;
};
util::Result<BotInfo> DecodeBotInfo(int http_status, std::string_view body);

// POST /callback/ws/endpoint's answer {code, msg, data:{URL, ClientConfig{...}}}. Codes other
// than 0 come back as errors: kUpstreamFailed for 1 (busy) and 1000040343 (internal), kUpstreamAuth
// marked final for the rest (the app id or secret was refused; retrying cannot help).
struct ClientConfig {
  int reconnect_count = -1;
  int reconnect_interval_s = 120;
  int reconnect_nonce_s = 30;
  int ping_interval_s = 120;
};
struct WsEndpoint {
  std::string url;
  std::int32_t service_id = 0;  // the URL's service_id query value
  std::string device_id;
  ClientConfig config;
};
util::Result<WsEndpoint> DecodeWsEndpoint(int http_status, std::string_view body);
// A pong's payload (a ClientConfig JSON) applied over `config`; fields absent or zero are kept.
void ApplyClientConfig(std::string_view json, ClientConfig& config);

// One message to send: msg_type and its content JSON (as a string, the API wants it so), or an
// image still to be uploaded (its content is made from the image_key).
struct OutgoingPart {
  std::string msg_type;                       // "text", "post", "image"
  std::string content;                        // JSON text; empty for an image to upload
  std::optional<std::size_t> upload_element;  // the Image element to upload first
};

// kInvalidArgument naming "message_chain[i]" for what Lark cannot be sent (a Voice; an Image
// without base64 or an http(s) url; an At without target), "target_id" for an empty or oversized
// id, or a chain with nothing to show.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// The messages that deliver `message` (which passed CheckDeliverable), in order: each run of
// text a `text` message, or a `post` ({"zh_cn":{"title":"","content":[[...]]}} with one
// paragraph per line and `at` tags) when it holds At or AtAll; each Image an image upload; a
// File a text line with its name and link. Source and Quote are dropped.
std::vector<OutgoingPart> EncodeOutgoing(const domain::OutgoingMessage& message);

// {"image_key": key} for an uploaded image.
std::string ImageContent(std::string_view image_key);

// A streamed reply's card (msg_type "interactive"): one markdown element holding `text`, marked
// `update_multi` (a shared card: PATCH /im/v1/messages/{id} may only update such cards).
std::string StreamCardContent(std::string_view text);

// The text a streamed card shows of a final reply: Plain text, At as <at id=...></at>, File as
// its name and link; Image and Voice are not in it (they are sent after the card).
std::string StreamCardText(const domain::MessageChain& chain);

// The body of PATCH /open-apis/im/v1/messages/{id}: {"content": card}.
std::string PatchBody(const std::string& content);

// The request body of POST /open-apis/im/v1/messages (`receive_id` present) or of
// /messages/{id}/reply (`receive_id` empty).
std::string SendBody(std::string_view receive_id, const std::string& msg_type,
                     const std::string& content, std::string_view uuid);

// A multipart/form-data body for /open-apis/im/v1/images: image_type=message and the image.
struct Multipart {
  std::string content_type;
  std::string body;
};
Multipart ImageUploadBody(std::string_view image_bytes, std::string_view boundary);

// The bytes of an Image element: a data URL or bare base64 in `base64`. kInvalidArgument when
// it does not decode.
util::Result<std::string> ImageBytes(const domain::MessageElement& image);

// True for ids that may go into a URL path unescaped (message ids "om_...", keys).
bool IsPlainId(std::string_view id);

}  // namespace sb::platforms::lark
