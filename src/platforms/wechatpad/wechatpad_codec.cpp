#include "platforms/wechatpad/wechatpad_codec.hpp"

#include <fmt/format.h>

#include <cctype>
#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/json_fields.hpp"

namespace sb::platforms::wechatpad {
namespace {

using common::Invalid;
using common::ObjectField;
using common::StringOr;
using domain::ElementType;
using domain::MessageElement;
using util::ErrorCode;
using util::JsonObject;

constexpr std::size_t kMaxTargetBytes = 128;
constexpr std::string_view kAtAllText = "@所有人";
constexpr std::string_view kMentionedYou = "在群聊中@了你";
// WeChat ends a mention "@nickname" with U+2005 (four-per-em space).
constexpr std::string_view kMentionEnd = "\xE2\x80\x85";

std::string TrimSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::string WebSocketOf(std::string_view http) {
  if (http.starts_with("https://")) return "wss://" + std::string(http.substr(8));
  if (http.starts_with("http://")) return "ws://" + std::string(http.substr(7));
  return std::string(http);
}

// `{"str": "..."}`, the service's wrapper for strings.
std::string_view Wrapped(const JsonObject& obj, std::string_view key) {
  const JsonObject* inner = ObjectField(obj, key);
  return inner == nullptr ? std::string_view() : StringOr(*inner, "str");
}

// An id written as a number or a string.
std::string IdText(const JsonObject& obj, std::string_view key) {
  const util::Json* v = obj.if_contains(key);
  if (v == nullptr) return {};
  if (v->is_string()) return std::string(v->get_string());
  if (v->is_int64()) return std::to_string(v->get_int64());
  if (v->is_uint64()) return std::to_string(v->get_uint64());
  return {};
}

// The text of <tag>…</tag> in a small XML document (msg_source), CDATA unwrapped; empty when
// absent.
std::string XmlText(std::string_view xml, std::string_view tag) {
  // Appended piecewise: "<" + std::string(tag) trips GCC 12's -Wrestrict false positive.
  std::string open(1, '<');
  open.append(tag).push_back('>');
  std::string close("</");
  close.append(tag).push_back('>');
  const std::size_t start = xml.find(open);
  if (start == std::string_view::npos) return {};
  const std::size_t from = start + open.size();
  const std::size_t end = xml.find(close, from);
  if (end == std::string_view::npos) return {};
  std::string_view text = xml.substr(from, end - from);
  if (text.starts_with("<![CDATA[") && text.ends_with("]]>")) {
    text = text.substr(9, text.size() - 12);
  }
  return std::string(text);
}

std::vector<std::string> SplitCommaList(std::string_view list) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i <= list.size()) {
    std::size_t comma = list.find(',', i);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = list.substr(i, comma - i);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) {
      item.remove_prefix(1);
    }
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) {
      item.remove_suffix(1);
    }
    if (!item.empty()) out.emplace_back(item);
    i = comma + 1;
  }
  return out;
}

// "wxid_abc:\ntext" -> {"wxid_abc", "text"}: the sender prefix of chatroom messages (LangBot's
// ^[a-zA-Z0-9_\-]{5,20}: on the first line).
std::optional<std::pair<std::string, std::string>> SplitSender(std::string_view content) {
  const std::size_t newline = content.find('\n');
  if (newline == std::string_view::npos) return std::nullopt;
  std::string_view first = content.substr(0, newline);
  if (first.empty() || first.back() != ':') return std::nullopt;
  first.remove_suffix(1);
  if (first.size() < 5 || first.size() > 20) return std::nullopt;
  for (char c : first) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return std::nullopt;
  }
  return std::make_pair(std::string(first), std::string(content.substr(newline + 1)));
}

// Takes out the "@nickname" mentions WeChat writes into the text: up to U+2005 when that ends
// it, else (LangBot's rule) up to 20 characters that are not spaces.
std::string StripMentions(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '@') {
      out += text[i++];
      continue;
    }
    const std::size_t end = text.find(kMentionEnd, i + 1);
    const std::size_t space = text.find_first_of(" \t\n", i + 1);
    if (end != std::string_view::npos && (space == std::string_view::npos || end < space)) {
      i = end + kMentionEnd.size();
      continue;
    }
    // Count up to 20 code points that are not ASCII spaces.
    std::size_t j = i + 1;
    int chars = 0;
    while (j < text.size() && chars < 20 && text[j] != ' ' && text[j] != '\t' && text[j] != '\n') {
      unsigned char c = static_cast<unsigned char>(text[j]);
      j += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      ++chars;
    }
    if (chars == 0) {
      out += text[i++];
      continue;
    }
    i = std::min(j, text.size());
  }
  return out;
}

std::string Trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  // U+2005 left in front after a mention.
  while (s.starts_with(kMentionEnd)) s.remove_prefix(kMentionEnd.size());
  return std::string(s);
}

bool PlausibleId(std::string_view id) {
  if (id.empty() || id.size() > kMaxTargetBytes) return false;
  for (unsigned char c : id) {
    if (c <= 0x20 || c == 0x7F) return false;
  }
  return true;
}

std::string StripDataPrefix(std::string_view b64) {
  if (b64.starts_with("data:")) {
    const std::size_t comma = b64.find(',');
    if (comma != std::string_view::npos) return std::string(b64.substr(comma + 1));
  }
  return std::string(b64);
}

MessageElement Element(ElementType type) {
  MessageElement e;
  e.type = type;
  return e;
}

}  // namespace

Endpoints EndpointsFromConfig(const util::JsonObject& config) {
  Endpoints out;
  out.http = common::ConfigBaseUrl(config, "api_base_url", "");
  if (out.http.empty()) out.http = TrimSlashes(common::ConfigString(config, "wechatpad_url"));
  out.ws = TrimSlashes(common::ConfigString(config, "wechatpad_ws"));
  if (out.ws.empty() && !out.http.empty()) out.ws = WebSocketOf(out.http) + "/ws";
  return out;
}

std::string KeyedUrl(std::string_view base, std::string_view path, std::string_view token) {
  std::string url = std::string(base) + std::string(path) + "?key=";
  for (unsigned char c : token) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      url += static_cast<char>(c);
    } else {
      url += fmt::format("%{:02X}", c);
    }
  }
  return url;
}

util::Result<Answer> DecodeAnswer(std::string_view body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) {
    return util::Fail(ErrorCode::kUpstreamFailed, "WeChatPad answered with no JSON object");
  }
  JsonObject& obj = parsed->get_object();
  const auto code = common::IntField(obj, "Code");
  if (!code) return util::Fail(ErrorCode::kUpstreamFailed, "WeChatPad answered without a Code");
  Answer answer;
  answer.code = *code;
  answer.ok = *code == 200;
  answer.text = std::string(StringOr(obj, "Text"));
  if (util::Json* data = obj.if_contains("Data")) answer.data = std::move(*data);
  return answer;
}

util::Result<void> CheckLoginStatus(const Answer& answer) {
  if (answer.ok) return {};
  util::Error error{
      ErrorCode::kUpstreamAuth,
      fmt::format("WeChatPad says the account is not usable with this token (Code {}{}{}); log "
                  "the account in on WeChatPadPro, check the token and save the bot again",
                  answer.code, answer.text.empty() ? "" : ": ", answer.text)};
  error.final = true;
  return tl::unexpected(std::move(error));
}

util::Result<Profile> DecodeProfile(const Answer& answer) {
  Profile profile;
  if (answer.ok && answer.data.is_object()) {
    if (const JsonObject* info = ObjectField(answer.data.get_object(), "userInfo")) {
      profile.wxid = std::string(Wrapped(*info, "userName"));
      profile.nickname = std::string(Wrapped(*info, "nickName"));
    }
  }
  if (profile.wxid.empty()) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      fmt::format("WeChatPad's GetProfile named no wxid (Code {}{}{})", answer.code,
                                  answer.text.empty() ? "" : ": ", answer.text));
  }
  return profile;
}

std::unordered_map<std::string, std::string> DecodeMemberNicknames(const Answer& answer) {
  std::unordered_map<std::string, std::string> out;
  if (!answer.ok || !answer.data.is_object()) return out;
  const JsonObject* member_data = ObjectField(answer.data.get_object(), "member_data");
  if (member_data == nullptr) return out;
  const util::JsonArray* list = common::ArrayField(*member_data, "chatroom_member_list");
  if (list == nullptr) return out;
  for (const util::Json& v : *list) {
    if (!v.is_object()) continue;
    const std::string_view wxid = StringOr(v.get_object(), "user_name");
    const std::string_view nick = StringOr(v.get_object(), "nick_name");
    if (!wxid.empty() && !nick.empty()) out.emplace(wxid, nick);
  }
  return out;
}

bool IsChatroom(std::string_view wxid) { return wxid.ends_with("@chatroom"); }

util::Result<DecodedFrame> DecodeSyncMessage(std::string_view text, std::string_view self_wxid) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return tl::unexpected(parsed.error());
  if (!parsed->is_object()) return Invalid("a message frame must be a JSON object");
  const JsonObject& frame = parsed->get_object();
  const std::string from(Wrapped(frame, "from_user_name"));
  if (from.empty()) return Invalid("from_user_name.str is required");
  DecodedFrame out;
  out.dedupe_key = IdText(frame, "new_msg_id");
  if (out.dedupe_key.empty()) out.dedupe_key = IdText(frame, "msg_id");
  if (from == self_wxid || from.starts_with("gh_") || from == "weixin" || from == "newsapp") {
    return out;
  }
  const std::optional<std::int64_t> type = common::IntField(frame, "msg_type");
  if (!type || *type != 1) {
    out.skipped = fmt::format("skipped a WeChat message of type {} from {} (only text is taken)",
                              type ? std::to_string(*type) : std::string("?"), from);
    return out;
  }
  const std::string_view content = Wrapped(frame, "content");
  const std::string_view push_content = StringOr(frame, "push_content");

  domain::ReceivedMessage message;
  message.message_id = out.dedupe_key;
  std::string body;
  if (IsChatroom(from)) {
    auto split = SplitSender(content);
    if (!split) {
      out.skipped = "skipped a chatroom message without its sender prefix";
      return out;
    }
    if (split->first == self_wxid) return out;
    message.chat_type = domain::TargetType::kGroup;
    message.chat_id = from;
    message.sender_id = split->first;
    const std::vector<std::string> ats =
        SplitCommaList(XmlText(StringOr(frame, "msg_source"), "atuserlist"));
    bool at_bot = push_content.find(kMentionedYou) != std::string_view::npos;
    for (const std::string& id : ats) at_bot = at_bot || id == self_wxid;
    const bool at_all = split->second.find(kAtAllText) != std::string::npos;
    if (!message.message_id.empty()) {
      MessageElement source = Element(ElementType::kSource);
      source.id = message.message_id;
      message.chain.push_back(std::move(source));
    }
    if (at_all) message.chain.push_back(Element(ElementType::kAtAll));
    if (at_bot) common::AppendAt(message.chain, std::string(self_wxid));
    for (const std::string& id : ats) {
      if (id != self_wxid && id != "notify@all") common::AppendAt(message.chain, id);
    }
    body =
        at_all || !ats.empty() || at_bot ? Trim(StripMentions(split->second)) : Trim(split->second);
  } else {
    message.chat_type = domain::TargetType::kPerson;
    message.chat_id = from;
    message.sender_id = from;
    if (!message.message_id.empty()) {
      MessageElement source = Element(ElementType::kSource);
      source.id = message.message_id;
      message.chain.push_back(std::move(source));
    }
    body = Trim(content);
  }
  // push_content reads "Nickname : text" (private) or "Nickname在群聊中@了你".
  if (const std::size_t sep = push_content.find(" : "); sep != std::string_view::npos) {
    message.sender_name = std::string(push_content.substr(0, sep));
  }
  if (message.sender_name.empty()) message.sender_name = message.sender_id;
  const bool has_mention = message.chain.size() > (message.message_id.empty() ? 0u : 1u);
  if (body.empty() && !has_mention) return out;
  common::AppendPlain(message.chain, body);
  out.message = std::move(message);
  return out;
}

std::vector<OutboundCall> EncodeOutgoing(
    const domain::OutgoingMessage& message,
    const std::unordered_map<std::string, std::string>& nicknames,
    const std::vector<std::string>& images) {
  std::vector<OutboundCall> calls;
  std::string text;
  util::JsonArray ats;
  const auto flush_text = [&] {
    if (text.empty()) return;
    JsonObject item{{"AtWxIDList", std::move(ats)},
                    {"ImageContent", ""},
                    {"MsgType", 0},
                    {"TextContent", std::move(text)},
                    {"ToUserName", message.target_id}};
    calls.push_back({"/message/SendTextMessage", JsonObject{{"MsgItem", util::JsonArray{item}}}});
    text.clear();
    ats = util::JsonArray();
  };
  std::size_t next_image = 0;
  for (const MessageElement& e : message.chain) {
    switch (e.type) {
      case ElementType::kPlain:
        text += e.text;
        break;
      case ElementType::kAt: {
        auto it = nicknames.find(e.target);
        text += "@" + (it != nicknames.end() ? it->second : e.target) + " ";
        ats.emplace_back(e.target);
        break;
      }
      case ElementType::kAtAll:
        text += std::string(kAtAllText) + " ";
        ats.emplace_back("notify@all");
        break;
      case ElementType::kImage: {
        flush_text();
        std::string b64;
        if (!e.url.empty()) {
          if (next_image < images.size()) b64 = images[next_image];
          ++next_image;
        } else {
          b64 = StripDataPrefix(e.base64);
        }
        if (b64.empty()) break;
        JsonObject item{{"AtWxIDList", util::JsonArray()},
                        {"ImageContent", std::move(b64)},
                        {"MsgType", 0},
                        {"TextContent", ""},
                        {"ToUserName", message.target_id}};
        calls.push_back(
            {"/message/SendImageMessage", JsonObject{{"MsgItem", util::JsonArray{item}}}});
        break;
      }
      case ElementType::kVoice:
      case ElementType::kFile:
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  flush_text();
  return calls;
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (!PlausibleId(message.target_id)) {
    return Invalid("target_id must be a wxid (person) or a chatroom id like 123@chatroom (group)");
  }
  bool shows_something = false;
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const MessageElement& e = message.chain[i];
    const std::string where = fmt::format("message_chain[{}]", i);
    switch (e.type) {
      case ElementType::kPlain:
        if (!e.text.empty()) shows_something = true;
        break;
      case ElementType::kAt:
        if (!PlausibleId(e.target)) return Invalid(where + ": At needs a wxid as target");
        shows_something = true;
        break;
      case ElementType::kAtAll:
        shows_something = true;
        break;
      case ElementType::kImage:
        if (e.url.empty() && e.base64.empty())
          return Invalid(where + ": Image needs a url or base64");
        if (!e.url.empty() && !e.url.starts_with("http://") && !e.url.starts_with("https://")) {
          return Invalid(where + ": Image url must be http(s)");
        }
        shows_something = true;
        break;
      case ElementType::kVoice:
        return Invalid(where +
                       ": Voice cannot be sent through WeChatPad by this adapter (it needs "
                       "SILK audio)");
      case ElementType::kFile:
        return Invalid(where + ": File cannot be sent through WeChatPad by this adapter");
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  if (!shows_something) return Invalid("message_chain has nothing WeChat can show");
  return {};
}

}  // namespace sb::platforms::wechatpad
