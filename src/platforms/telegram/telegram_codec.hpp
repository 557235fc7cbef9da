// The Telegram Bot API as the adapter sees it: response envelopes, Updates turned into
// ReceivedMessages, the shared message model turned into sendMessage / sendPhoto / ... calls, and
// Markdown turned into MarkdownV2. Pure functions, no I/O; telegram_adapter.cpp does the calls.
//   auto reply = DecodeApiResponse(response.status, response.body);  // envelope, ok or not
//   auto update = DecodeUpdate(json, bot);  // kInvalidArgument naming the field on a wrong shape
//   auto calls = EncodeOutgoing(message, reply_to, {.markdown = true});
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "platforms/platform_adapter.hpp"
#include "platforms/telegram/telegram_markdown.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::telegram {

// sendMessage's `text` limit, in UTF-16 code units (what Telegram counts).
inline constexpr std::size_t kMaxTextUnits = 4096;

// The bot itself, from getMe: `id` names it in At elements, `username` is what `@mentions` and
// `/cmd@username` carry.
struct BotIdentity {
  std::int64_t id = 0;
  std::string username;  // without the '@'
};

// A Bot API answer: {"ok":true,"result":...} or {"ok":false,"error_code","description",
// "parameters":{"retry_after"}}.
struct ApiResponse {
  bool ok = false;
  util::Json result = nullptr;  // when ok
  int error_code = 0;           // when !ok: the envelope's error_code, else the HTTP status
  std::string description;      // when !ok; may be empty
  int retry_after = 0;          // seconds, from parameters.retry_after; 0 when absent
};

// Fails with kUpstreamFailed when `body` is no Bot API envelope (a proxy's HTML error page, a
// truncated body); the message names the HTTP status, never the body.
util::Result<ApiResponse> DecodeApiResponse(int http_status, std::string_view body);

// getMe's result. kUpstreamFailed when it has no integer `id`.
util::Result<BotIdentity> DecodeBotIdentity(const util::Json& result);

// The update_id of an Update, when it has an integer one (even if the rest is malformed).
std::optional<std::int64_t> ReadUpdateId(const util::Json& update);

// A media element of a decoded message whose bytes still have to be fetched with getFile.
struct PendingFile {
  std::size_t element = 0;     // index into the message's chain
  std::string file_id;         // for getFile
  std::int64_t file_size = 0;  // 0 when the update did not say
  std::string mime_type;       // for the data: URL; a default when the update did not say
};

struct DecodedUpdate {
  std::int64_t update_id = 0;
  // Empty for updates the bot does not take: other update kinds, channel posts, the bot's own
  // messages, messages without text, caption, photo, voice or document.
  std::optional<ReceivedMessage> message;
  std::vector<PendingFile> files;  // one per Image / Voice / File element of `message`
};

// Turns an Update into a ReceivedMessage. The chain is Source{message_id}, Quote{id} for a reply,
// At{bot id} for a reply to the bot in a group, the text split around mentions, then one media
// element (its bytes still missing, see `files`). Entity offsets are UTF-16 code units; entities
// outside the text are ignored. Fails with kInvalidArgument whose message starts with the
// offending field ("message.chat.id must be an integer") when the update has the wrong shape.
util::Result<DecodedUpdate> DecodeUpdate(const util::Json& update, const BotIdentity& bot);

// getFile's result. kUpstreamFailed when it has no file_path.
struct FileInfo {
  std::string file_path;
  std::int64_t file_size = 0;  // 0 when absent
};
util::Result<FileInfo> DecodeFileInfo(const util::Json& result);

// "data:<mime>;base64,<standard padded base64 of bytes>", the form Image/Voice elements carry.
std::string DataUrl(std::string_view mime_type, std::string_view bytes);

// kInvalidArgument naming "message_chain[i]" for an element Telegram cannot carry (Image or Voice
// without url or valid base64, File without url, At without target, Quote without a numeric id),
// or for a target id that is neither an integer nor "@channelname", or a chain with nothing to
// show.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// A file sent as multipart bytes rather than by URL.
struct Upload {
  std::string field;  // "photo", "voice"
  std::string filename;
  std::string mime_type;
  std::string bytes;
};

// One Bot API call that delivers a piece of an outgoing message, in order.
struct OutboundCall {
  std::string method;       // "sendMessage", "sendPhoto", "sendVoice", "sendDocument"
  util::JsonObject params;  // JSON body; with `upload`, the other form fields
  std::optional<Upload> upload;
  // For a MarkdownV2 sendMessage: the same text without parse_mode, to resend once when
  // Telegram answers "can't parse entities".
  std::optional<util::JsonObject> plain_params;
};

struct EncodeOptions {
  bool markdown = true;  // convert text to MarkdownV2 (config `markdown_card`)
  // The name shown for At{target} with a numeric target; the target itself when null or empty.
  std::function<std::string(const std::string& user_id)> display_name = nullptr;
};

// The calls that deliver `message` (which passed CheckDeliverable): each run of Plain / At / AtAll
// text becomes sendMessage calls of at most kMaxTextUnits, Image / Voice / File one call each,
// Source is dropped. The first Quote{id} (or, for a group, `reply_to_message_id`) becomes
// reply_parameters of the first call. kInvalidArgument only for what CheckDeliverable rejects.
util::Result<std::vector<OutboundCall>> EncodeOutgoing(const domain::OutgoingMessage& message,
                                                       std::string_view reply_to_message_id,
                                                       const EncodeOptions& options);

// A multipart/form-data body: one part per param (strings as they are, anything else as JSON
// text) and the upload's part. The Content-Type is "multipart/form-data; boundary=<boundary>".
std::string EncodeMultipart(const util::JsonObject& params, const Upload& upload,
                            std::string_view boundary);

// The message_id of a send method's result (a Message), as a decimal string.
util::Result<std::string> DecodeSentMessageId(const util::Json& result);

// True for Telegram's 400 "can't parse entities" answer to a parse_mode text.
bool IsEntityParseError(const ApiResponse& response);

}  // namespace sb::platforms::telegram
