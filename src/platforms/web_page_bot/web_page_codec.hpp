// The web page bot's wire format, pure (no Asio): the frames of a visitor's WebSocket, the
// messages they become, the Turnstile siteverify call and the ticket that lets a verified visitor
// open sockets for a while. Our own protocol (the widget is ours), documented in
// docs/adapters/web_page_bot.md.
//   auto frame = DecodeClientFrame(R"({"type":"message","text":"hi"})");
//   domain::ReceivedMessage m = ToReceived(visitor_id, frame->text, "m1");
//   std::string out = MessageFrame("bot", "r1", EncodeElements(reply.chain), unix_now);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::web_page {

// The longest text a visitor may send in one message, in bytes of UTF-8 (the widget allows 4000
// characters, up to 12000 bytes in CJK scripts); a frame longer than kMaxFrameBytes closes the
// socket (1009).
constexpr std::size_t kMaxTextBytes = 12000;
constexpr std::size_t kMaxFrameBytes = 16 * 1024;

// A visitor id is a canonical random UUID (version 4, lower case), as LangBot's embed widget
// keeps in the browser: anything else is refused before it can name a session.
bool IsVisitorId(std::string_view id);

struct ClientFrame {
  enum class Kind { kMessage, kPing };
  Kind kind = Kind::kMessage;
  std::string text;  // kMessage: non-empty, at most kMaxTextBytes, valid UTF-8
};

// {"type":"message","text":"..."} or {"type":"ping"}; kInvalidArgument saying what is wrong,
// kPayloadTooLarge for a text over kMaxTextBytes.
util::Result<ClientFrame> DecodeClientFrame(std::string_view frame);

// A visitor's message as the pipeline sees it: a private chat whose id is the visitor id.
domain::ReceivedMessage ToReceived(const std::string& visitor_id, std::string text,
                                   std::string message_id);

// Every element has somewhere to go on a page except a voice or file without a URL, or an image
// with neither URL nor data; the target is a visitor (person) id.
util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message);

// [{"type":"text","text"}, {"type":"image","url"}, {"type":"file","url","name"}]: what the widget
// draws. At, AtAll, Quote and Source have no place on a page and are left out.
util::JsonArray EncodeElements(const domain::MessageChain& chain);

// Frames the server sends.
util::JsonObject MessageEntry(std::string_view role, std::string_view id, util::JsonArray elements,
                              std::int64_t unix_seconds);  // role: "visitor" or "bot"
std::string MessageFrame(const util::JsonObject& entry);   // {"type":"message", ...entry}
std::string ReadyFrame(std::string_view visitor_id, const std::vector<util::JsonObject>& history);
std::string ErrorFrame(std::string_view code, std::string_view message);
std::string PongFrame();

// The ticket a verified visitor presents when opening a socket: "<expiry>.<hex HMAC-SHA256 of
// visitor and expiry>", so the server keeps no table of them.
std::string MakeTicket(std::string_view key, std::string_view visitor_id,
                       std::int64_t expires_unix);
bool CheckTicket(std::string_view key, std::string_view visitor_id, std::string_view ticket,
                 std::int64_t now_unix);

// Cloudflare Turnstile: the siteverify request body (application/x-www-form-urlencoded) and its
// answer, {"success":true|false,"error-codes":[...],"hostname":...}.
std::string SiteverifyBody(std::string_view secret, std::string_view response,
                           std::string_view remote_ip);
struct SiteverifyResult {
  bool success = false;
  std::vector<std::string> error_codes;
};
util::Result<SiteverifyResult> ParseSiteverify(std::string_view body);

// application/x-www-form-urlencoded escaping (RFC 3986 unreserved characters kept).
std::string FormEscape(std::string_view text);

}  // namespace sb::platforms::web_page
