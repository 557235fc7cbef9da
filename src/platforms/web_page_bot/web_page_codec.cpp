#include "platforms/web_page_bot/web_page_codec.hpp"

#include <fmt/format.h>

#include <charconv>

#include "platforms/common/json_fields.hpp"
#include "util/crypto.hpp"
#include "util/utf8.hpp"

namespace sb::platforms::web_page {

using domain::ElementType;
using util::ErrorCode;

bool IsVisitorId(std::string_view id) {
  // xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx
  if (id.size() != 36) return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  const char variant = id[19];
  return id[14] == '4' && (variant == '8' || variant == '9' || variant == 'a' || variant == 'b');
}

util::Result<ClientFrame> DecodeClientFrame(std::string_view frame) {
  auto parsed = util::ParseJson(frame);
  if (!parsed) return tl::unexpected(parsed.error());
  const auto* obj = parsed->if_object();
  if (obj == nullptr) return util::Fail(ErrorCode::kInvalidArgument, "a frame is a JSON object");
  const std::string_view type = common::StringOr(*obj, "type");
  if (type == "ping") return ClientFrame{ClientFrame::Kind::kPing, {}};
  if (type != "message") {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "type must be \"message\" or \"ping\"");  // the unknown value is not echoed
  }
  const auto* text = common::StringField(*obj, "text");
  if (text == nullptr) return util::Fail(ErrorCode::kInvalidArgument, "text must be a string");
  std::string_view value(text->data(), text->size());
  if (value.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return util::Fail(ErrorCode::kInvalidArgument, "text is empty");
  }
  if (value.size() > kMaxTextBytes) {
    return util::Fail(ErrorCode::kPayloadTooLarge,
                      fmt::format("text is longer than {} bytes", kMaxTextBytes));
  }
  if (!util::IsValidUtf8(value)) {
    return util::Fail(ErrorCode::kInvalidArgument, "text is not UTF-8");
  }
  return ClientFrame{ClientFrame::Kind::kMessage, std::string(value)};
}

domain::ReceivedMessage ToReceived(const std::string& visitor_id, std::string text,
                                   std::string message_id) {
  domain::ReceivedMessage m;
  m.chat_type = domain::TargetType::kPerson;
  m.chat_id = visitor_id;
  m.sender_id = visitor_id;
  m.sender_name = "Visitor";
  m.message_id = message_id;
  domain::MessageElement source;
  source.type = ElementType::kSource;
  source.id = std::move(message_id);
  domain::MessageElement plain;
  plain.text = std::move(text);
  m.chain.push_back(std::move(source));
  m.chain.push_back(std::move(plain));
  return m;
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (message.target_type != domain::TargetType::kPerson) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "target_type: a web page bot talks to visitors (person) only");
  }
  if (!IsVisitorId(message.target_id)) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "target_id: a visitor id (the UUID the widget keeps) is needed");
  }
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const auto& e = message.chain[i];
    const bool needs_url = e.type == ElementType::kVoice || e.type == ElementType::kFile ||
                           (e.type == ElementType::kImage && e.base64.empty());
    if (needs_url && e.url.empty()) {
      return util::Fail(
          ErrorCode::kInvalidArgument,
          fmt::format("message_chain[{}]: {} needs a url", i, domain::ElementTypeName(e.type)));
    }
  }
  return {};
}

namespace {

// A base64 image arrives with or without its data: prefix.
std::string ImageSource(const domain::MessageElement& e) {
  if (!e.url.empty()) return e.url;
  if (e.base64.starts_with("data:")) return e.base64;
  return "data:image/png;base64," + e.base64;
}

}  // namespace

util::JsonArray EncodeElements(const domain::MessageChain& chain) {
  util::JsonArray out;
  for (const auto& e : chain) {
    switch (e.type) {
      case ElementType::kPlain:
        if (e.text.empty()) break;
        // Consecutive texts are one paragraph on the page.
        if (!out.empty() && out.back().as_object().at("type") == "text") {
          auto& prev = out.back().as_object()["text"].as_string();
          prev.append(e.text);
        } else {
          out.push_back(util::JsonObject{{"type", "text"}, {"text", e.text}});
        }
        break;
      case ElementType::kImage:
        out.push_back(util::JsonObject{{"type", "image"}, {"url", ImageSource(e)}});
        break;
      case ElementType::kVoice:
      case ElementType::kFile:
        out.push_back(util::JsonObject{
            {"type", "file"},
            {"url", e.url},
            {"name", e.name.empty() ? std::string(domain::ElementTypeName(e.type)) : e.name}});
        break;
      case ElementType::kAt:
      case ElementType::kAtAll:
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  return out;
}

util::JsonObject MessageEntry(std::string_view role, std::string_view id, util::JsonArray elements,
                              std::int64_t unix_seconds) {
  return util::JsonObject{
      {"role", role}, {"id", id}, {"elements", std::move(elements)}, {"timestamp", unix_seconds}};
}

std::string MessageFrame(const util::JsonObject& entry) {
  util::JsonObject frame = entry;
  frame["type"] = "message";
  return util::SerializeJson(frame);
}

std::string ReadyFrame(std::string_view visitor_id, const std::vector<util::JsonObject>& history) {
  util::JsonArray messages;
  for (const auto& entry : history) messages.push_back(entry);
  return util::SerializeJson(util::JsonObject{
      {"type", "ready"}, {"visitor", visitor_id}, {"history", std::move(messages)}});
}

std::string ErrorFrame(std::string_view code, std::string_view message) {
  return util::SerializeJson(
      util::JsonObject{{"type", "error"}, {"code", code}, {"message", message}});
}

std::string PongFrame() { return R"({"type":"pong"})"; }

namespace {

std::string TicketMac(std::string_view key, std::string_view visitor_id, std::string_view expiry) {
  return util::HexEncode(util::HmacSha256(key, fmt::format("{}.{}", visitor_id, expiry)));
}

}  // namespace

std::string MakeTicket(std::string_view key, std::string_view visitor_id,
                       std::int64_t expires_unix) {
  const std::string expiry = std::to_string(expires_unix);
  return expiry + "." + TicketMac(key, visitor_id, expiry);
}

bool CheckTicket(std::string_view key, std::string_view visitor_id, std::string_view ticket,
                 std::int64_t now_unix) {
  const auto dot = ticket.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  const std::string_view expiry = ticket.substr(0, dot);
  std::int64_t expires = 0;
  auto [end, ec] = std::from_chars(expiry.data(), expiry.data() + expiry.size(), expires);
  if (ec != std::errc() || end != expiry.data() + expiry.size()) return false;
  if (expires < now_unix) return false;
  return util::ConstantTimeEquals(ticket.substr(dot + 1), TicketMac(key, visitor_id, expiry));
}

std::string FormEscape(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string SiteverifyBody(std::string_view secret, std::string_view response,
                           std::string_view remote_ip) {
  std::string body = "secret=" + FormEscape(secret) + "&response=" + FormEscape(response);
  if (!remote_ip.empty()) body += "&remoteip=" + FormEscape(remote_ip);
  return body;
}

util::Result<SiteverifyResult> ParseSiteverify(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed) return tl::unexpected(parsed.error());
  const auto* obj = parsed->if_object();
  if (obj == nullptr) {
    return util::Fail(ErrorCode::kUpstreamFailed, "siteverify answered something not an object");
  }
  SiteverifyResult r;
  r.success = common::IsTrue(*obj, "success");
  if (const auto* codes = common::ArrayField(*obj, "error-codes")) {
    for (const auto& code : *codes) {
      if (code.is_string()) r.error_codes.emplace_back(code.as_string());
    }
  }
  return r;
}

}  // namespace sb::platforms::web_page
