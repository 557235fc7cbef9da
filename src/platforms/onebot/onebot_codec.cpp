#include "platforms/onebot/onebot_codec.hpp"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <cstdint>
#include <utility>

#include "domain/message_text.hpp"
#include "platforms/common/chain_builder.hpp"

namespace sb::platforms::onebot {
namespace {

using common::AppendPlain;
using common::Invalid;
using domain::ElementType;
using domain::MessageElement;
using util::Json;
using util::JsonArray;
using util::JsonObject;

constexpr std::size_t kMaxFailureBytes = 512;
constexpr std::size_t kMaxNameBytes = 256;

std::int64_t ToInt64(std::string_view s) {
  std::int64_t value = 0;
  std::from_chars(s.data(), s.data() + s.size(), value);
  return value;
}

// An id field: an integer, or a string holding one (some implementations quote ids). Absent or
// null gives an empty string; anything else is an error naming the field.
util::Result<std::string> ReadId(const JsonObject& obj, std::string_view key, bool required) {
  const Json* v = obj.if_contains(key);
  if (v == nullptr || v->is_null()) {
    if (required) return Invalid(std::string(key) + " is required");
    return std::string();
  }
  if (v->is_int64()) return std::to_string(v->get_int64());
  if (v->is_uint64()) return std::to_string(v->get_uint64());
  if (v->is_string() && IsDecimalId(v->get_string())) return std::string(v->get_string());
  return Invalid(std::string(key) + " must be an integer");
}

// A segment's data value: strings per the standard; numbers and booleans as their JSON text
// (some implementations send `"qq": 10001`).
std::string DataValue(const Json& v) {
  if (v.is_string()) return std::string(v.get_string());
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  if (v.is_bool()) return v.get_bool() ? "true" : "false";
  if (v.is_double()) return util::SerializeJson(v);
  return std::string();
}

std::string Bounded(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
}

util::Result<std::vector<Segment>> ReadSegments(const Json& message) {
  if (message.is_string()) {
    const auto& s = message.get_string();
    if (s.size() > kMaxCqStringBytes) return Invalid("message is over the CQ string limit");
    auto segments = ParseCqString(s);
    if (segments.size() > kMaxSegments) return Invalid("message has too many segments");
    return segments;
  }
  const JsonArray* array = message.if_array();
  JsonArray single;
  if (array == nullptr && message.is_object()) {  // one segment on its own, as the API allows
    single.push_back(message);
    array = &single;
  }
  if (array == nullptr) return Invalid("message must be a segment array or a CQ string");
  if (array->size() > kMaxSegments) return Invalid("message has too many segments");
  std::vector<Segment> segments;
  segments.reserve(array->size());
  for (std::size_t i = 0; i < array->size(); ++i) {
    const JsonObject* seg = (*array)[i].if_object();
    const std::string where = "message[" + std::to_string(i) + "]";
    if (seg == nullptr) return Invalid(where + " must be an object");
    const Json* type = seg->if_contains("type");
    if (type == nullptr || !type->is_string()) return Invalid(where + ".type must be a string");
    Segment out;
    out.type = std::string(type->get_string());
    const Json* data = seg->if_contains("data");
    if (data != nullptr && !data->is_null()) {
      const JsonObject* fields = data->if_object();
      if (fields == nullptr) return Invalid(where + ".data must be an object");
      for (const auto& kv : *fields) {
        if (kv.value().is_object() || kv.value().is_array()) {
          // NapCat's face carries raw:{faceText}; keep that one, flatten nothing else.
          if (kv.key() == "raw" && kv.value().is_object()) {
            if (const Json* t = kv.value().get_object().if_contains("faceText");
                t != nullptr && t->is_string()) {
              out.data.emplace_back("faceText", std::string(t->get_string()));
            }
          }
          continue;
        }
        out.data.emplace_back(std::string(kv.key()), DataValue(kv.value()));
      }
    }
    segments.push_back(std::move(out));
  }
  return segments;
}

bool IsUrl(std::string_view s) { return s.starts_with("http://") || s.starts_with("https://"); }

void AppendSegment(domain::MessageChain& chain, const Segment& seg) {
  MessageElement e;
  if (seg.type == "text") {
    AppendPlain(chain, std::string(seg.Get("text")));
  } else if (seg.type == "at") {
    const std::string_view qq = seg.Get("qq");
    if (qq == "all") {
      e.type = ElementType::kAtAll;
    } else if (IsDecimalId(qq)) {
      e.type = ElementType::kAt;
      e.target = std::string(qq);
    } else {
      return;
    }
    chain.push_back(std::move(e));
  } else if (seg.type == "image" || seg.type == "record") {
    std::string_view url = seg.Get("url");
    if (!IsUrl(url)) url = seg.Get("file");
    if (!IsUrl(url)) return;  // a bare file name is useless outside the implementation
    e.type = seg.type == "image" ? ElementType::kImage : ElementType::kVoice;
    e.url = std::string(url);
    chain.push_back(std::move(e));
  } else if (seg.type == "reply") {
    if (seg.Get("id").empty()) return;
    e.type = ElementType::kQuote;
    e.id = std::string(seg.Get("id"));
    chain.push_back(std::move(e));
  } else if (seg.type == "face") {
    std::string_view text = seg.Get("faceText");
    AppendPlain(chain,
                text.empty() ? "[face:" + std::string(seg.Get("id")) + "]" : std::string(text));
  } else if (seg.type == "file") {
    std::string_view url = seg.Get("url");
    if (!IsUrl(url)) url = seg.Get("file");
    if (!IsUrl(url)) return;
    e.type = ElementType::kFile;
    e.url = std::string(url);
    e.name = Bounded(seg.Get("name").empty() ? seg.Get("file") : seg.Get("name"), kMaxNameBytes);
    chain.push_back(std::move(e));
  }
}

util::Result<Frame> DecodeMessage(const JsonObject& event, std::string_view bot_id, Frame frame) {
  const Json* type = event.if_contains("message_type");
  if (type == nullptr || !type->is_string()) return Invalid("message_type must be a string");
  const bool group = type->get_string() == "group";
  if (!group && type->get_string() != "private") {
    frame.ignored = "message_type " + Bounded(type->get_string(), 32);
    return frame;
  }
  auto user_id = ReadId(event, "user_id", true);
  if (!user_id) return tl::unexpected(user_id.error());
  auto message_id = ReadId(event, "message_id", false);
  if (!message_id) return tl::unexpected(message_id.error());
  std::string group_id;
  if (group) {
    auto id = ReadId(event, "group_id", true);
    if (!id) return tl::unexpected(id.error());
    group_id = std::move(*id);
  }
  const std::string_view me = bot_id.empty() ? std::string_view(frame.self_id) : bot_id;
  if (!me.empty() && *user_id == me) {
    frame.ignored = "the bot's own message";
    return frame;
  }
  const Json* message = event.if_contains("message");
  if (message == nullptr) return Invalid("message is required");
  auto segments = ReadSegments(*message);
  if (!segments) return tl::unexpected(segments.error());

  domain::ReceivedMessage received;
  received.chat_type = group ? domain::TargetType::kGroup : domain::TargetType::kPerson;
  received.chat_id = group ? group_id : *user_id;
  received.sender_id = *user_id;
  received.message_id = *message_id;
  if (const JsonObject* sender =
          event.contains("sender") ? event.at("sender").if_object() : nullptr) {
    for (std::string_view key : {"card", "nickname"}) {
      const Json* name = sender->if_contains(key);
      if (name != nullptr && name->is_string() && !name->get_string().empty()) {
        received.sender_name = Bounded(name->get_string(), kMaxNameBytes);
        break;
      }
    }
  }
  if (!received.message_id.empty()) {
    MessageElement source;
    source.type = ElementType::kSource;
    source.id = received.message_id;
    received.chain.push_back(std::move(source));
  }
  const std::size_t header = received.chain.size();
  for (const Segment& seg : *segments) AppendSegment(received.chain, seg);
  if (received.chain.size() == header) {
    frame.ignored = "a message with nothing the bot can read";
    return frame;
  }
  frame.kind = FrameKind::kMessage;
  frame.message = std::move(received);
  return frame;
}

// get_msg's data.message as text for a quote: a bad shape gives nothing (the quote is context,
// the message it belongs to is delivered anyway).
void ReadMessageText(const Json& message, ActionResponse& r) {
  auto segments = ReadSegments(message);
  if (!segments) return;
  domain::MessageChain chain;
  for (const Segment& seg : *segments) AppendSegment(chain, seg);
  r.message_text = domain::MakeQuote({}, domain::QuotableText(chain)).text;
}

Frame DecodeResponse(const JsonObject& obj) {
  Frame frame;
  frame.kind = FrameKind::kResponse;
  ActionResponse& r = frame.response;
  if (const Json* echo = obj.if_contains("echo"); echo != nullptr && !echo->is_null()) {
    r.echo = echo->is_string() ? std::string(echo->get_string()) : util::SerializeJson(*echo);
  }
  if (const Json* status = obj.if_contains("status"); status != nullptr && status->is_string()) {
    r.status = Bounded(status->get_string(), 32);
  }
  if (const Json* retcode = obj.if_contains("retcode")) {
    if (retcode->is_int64()) r.retcode = retcode->get_int64();
    if (retcode->is_uint64()) r.retcode = static_cast<std::int64_t>(retcode->get_uint64());
  }
  const bool status_ok = r.status == "ok" || r.status == "async" || r.status.empty();
  r.ok = status_ok && (r.retcode == 0 || r.retcode == 1) && obj.contains("retcode");
  if (const Json* data = obj.if_contains("data"); data != nullptr && data->is_object()) {
    const JsonObject& d = data->get_object();
    if (auto id = ReadId(d, "message_id", false)) r.message_id = std::move(*id);
    if (auto id = ReadId(d, "user_id", false)) r.user_id = std::move(*id);
    if (const Json* nick = d.if_contains("nickname"); nick != nullptr && nick->is_string()) {
      r.nickname = Bounded(nick->get_string(), kMaxNameBytes);
    }
    if (const Json* message = d.if_contains("message")) ReadMessageText(*message, r);
    if (const Json* sender = d.if_contains("sender"); sender != nullptr && sender->is_object()) {
      if (auto id = ReadId(sender->get_object(), "user_id", false)) r.sender_id = std::move(*id);
    }
  }
  for (std::string_view key : {"wording", "message", "msg"}) {
    const Json* text = obj.if_contains(key);
    if (text != nullptr && text->is_string() && !text->get_string().empty()) {
      r.failure = Bounded(text->get_string(), kMaxFailureBytes);
      break;
    }
  }
  return frame;
}

}  // namespace

bool IsDecimalId(std::string_view s) {
  if (s.empty() || s.size() > 19) return false;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size() && s[0] != '-';
}

std::string_view Segment::Get(std::string_view key) const {
  for (const auto& [k, v] : data) {
    if (k == key) return v;
  }
  return {};
}

util::Result<Frame> DecodeFrame(std::string_view text, std::string_view bot_id) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return tl::unexpected(parsed.error());
  const JsonObject* obj = parsed->if_object();
  if (obj == nullptr) return Invalid("a frame must be a JSON object");
  const Json* post_type = obj->if_contains("post_type");
  if (post_type == nullptr) {
    if (!obj->contains("retcode") && !obj->contains("status") && !obj->contains("echo")) {
      return Invalid("a frame must have post_type (an event) or retcode (an action response)");
    }
    return DecodeResponse(*obj);
  }
  if (!post_type->is_string()) return Invalid("post_type must be a string");
  Frame frame;
  auto self_id = ReadId(*obj, "self_id", false);
  if (!self_id) return tl::unexpected(self_id.error());
  frame.self_id = std::move(*self_id);
  const std::string_view kind = post_type->get_string();
  if (kind == "message") return DecodeMessage(*obj, bot_id, std::move(frame));
  if (kind == "meta_event") {
    const Json* meta = obj->if_contains("meta_event_type");
    if (meta == nullptr || !meta->is_string()) return Invalid("meta_event_type must be a string");
    frame.kind = FrameKind::kMeta;
    if (meta->get_string() == "lifecycle") {
      frame.meta.kind = MetaKind::kLifecycle;
      if (const Json* sub = obj->if_contains("sub_type"); sub != nullptr && sub->is_string()) {
        frame.meta.sub_type = Bounded(sub->get_string(), 32);
      }
    } else if (meta->get_string() == "heartbeat") {
      frame.meta.kind = MetaKind::kHeartbeat;
      if (const Json* interval = obj->if_contains("interval")) {
        if (interval->is_int64() && interval->get_int64() > 0) {
          frame.meta.interval_ms = interval->get_int64();
        } else if (interval->is_uint64()) {
          frame.meta.interval_ms =
              static_cast<std::int64_t>(std::min<std::uint64_t>(interval->get_uint64(), INT64_MAX));
        }
      }
    }
    return frame;
  }
  frame.ignored = Bounded(kind, 32);  // notice, request, message_sent, ...
  return frame;
}

std::vector<Segment> ParseCqString(std::string_view text) {
  std::vector<Segment> out;
  auto add_text = [&out](std::string_view raw) {
    if (raw.empty()) return;
    std::string unescaped = UnescapeCq(raw);
    if (!out.empty() && out.back().type == "text") {
      out.back().data[0].second += unescaped;
      return;
    }
    Segment seg;
    seg.type = "text";
    seg.data.emplace_back("text", std::move(unescaped));
    out.push_back(std::move(seg));
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t open = text.find("[CQ:", pos);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find(']', open);
    if (close == std::string_view::npos) break;
    add_text(text.substr(pos, open - pos));
    const std::string_view body = text.substr(open + 4, close - open - 4);
    const std::size_t comma = body.find(',');
    Segment seg;
    seg.type = std::string(body.substr(0, comma));
    if (comma != std::string_view::npos) {
      std::string_view params = body.substr(comma + 1);
      while (!params.empty()) {
        const std::size_t next = params.find(',');
        const std::string_view item = params.substr(0, next);
        const std::size_t eq = item.find('=');
        if (eq != std::string_view::npos) {
          seg.data.emplace_back(std::string(item.substr(0, eq)),
                                UnescapeCq(item.substr(eq + 1), true));
        }
        if (next == std::string_view::npos) break;
        params.remove_prefix(next + 1);
      }
    }
    out.push_back(std::move(seg));
    pos = close + 1;
  }
  add_text(text.substr(pos));
  return out;
}

std::string EscapeCq(std::string_view text, bool in_parameter) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '[':
        out += "&#91;";
        break;
      case ']':
        out += "&#93;";
        break;
      case ',':
        out += in_parameter ? "&#44;" : ",";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string UnescapeCq(std::string_view text, bool in_parameter) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '&') {
      const std::string_view rest = text.substr(i);
      if (rest.starts_with("&amp;")) {
        out += '&';
        i += 5;
        continue;
      }
      if (rest.starts_with("&#91;")) {
        out += '[';
        i += 5;
        continue;
      }
      if (rest.starts_with("&#93;")) {
        out += ']';
        i += 5;
        continue;
      }
      if (in_parameter && rest.starts_with("&#44;")) {
        out += ',';
        i += 5;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (!IsDecimalId(message.target_id)) {
    return Invalid("target_id must be a QQ number or group number (digits only)");
  }
  bool has_content = false;
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const MessageElement& e = message.chain[i];
    const std::string where = "message_chain[" + std::to_string(i) + "]";
    switch (e.type) {
      case ElementType::kPlain:
        has_content = has_content || !e.text.empty();
        break;
      case ElementType::kAt:
        if (!IsDecimalId(e.target)) return Invalid(where + ": At needs a numeric QQ target");
        has_content = true;
        break;
      case ElementType::kAtAll:
        if (message.target_type != domain::TargetType::kGroup) {
          return Invalid(where + ": AtAll only works in a group");
        }
        has_content = true;
        break;
      case ElementType::kImage:
      case ElementType::kVoice:
        if (e.url.empty() && e.base64.empty()) {
          return Invalid(where + ": " + domain::ElementTypeName(e.type) + " needs a url or base64");
        }
        has_content = true;
        break;
      case ElementType::kFile:
        if (e.url.empty()) return Invalid(where + ": File needs a url");
        has_content = true;
        break;
      case ElementType::kQuote:
        if (e.id.empty()) return Invalid(where + ": Quote needs a message id");
        break;
      case ElementType::kSource:
        break;
    }
  }
  if (!has_content) return Invalid("message_chain has nothing to send");
  return {};
}

namespace {

JsonObject MakeSegment(std::string_view type, JsonObject data) {
  return JsonObject{{"type", type}, {"data", std::move(data)}};
}

// base64 fields carry either bare base64 or a data: URL; OneBot wants base64://<data>.
std::string Base64File(std::string_view base64) {
  if (base64.starts_with("data:")) {
    const std::size_t comma = base64.find(',');
    base64 = comma == std::string_view::npos ? std::string_view() : base64.substr(comma + 1);
  }
  return "base64://" + std::string(base64);
}

}  // namespace

util::Result<Action> EncodeSend(const domain::OutgoingMessage& message) {
  if (auto ok = CheckDeliverable(message); !ok) return tl::unexpected(ok.error());
  JsonArray segments;
  bool quoted = false;
  for (const MessageElement& e : message.chain) {
    if (e.type != ElementType::kQuote || quoted) continue;
    JsonObject data;
    data["id"] = e.id;
    segments.push_back(MakeSegment("reply", std::move(data)));
    quoted = true;
  }
  for (const MessageElement& e : message.chain) {
    JsonObject data;
    switch (e.type) {
      case ElementType::kPlain:
        if (e.text.empty()) continue;
        data["text"] = e.text;
        segments.push_back(MakeSegment("text", std::move(data)));
        break;
      case ElementType::kAt:
        data["qq"] = e.target;
        segments.push_back(MakeSegment("at", std::move(data)));
        break;
      case ElementType::kAtAll:
        data["qq"] = "all";
        segments.push_back(MakeSegment("at", std::move(data)));
        break;
      case ElementType::kImage:
      case ElementType::kVoice:
        data["file"] = e.url.empty() ? Base64File(e.base64) : e.url;
        segments.push_back(
            MakeSegment(e.type == ElementType::kImage ? "image" : "record", std::move(data)));
        break;
      case ElementType::kFile:
        data["file"] = e.url;
        if (!e.name.empty()) data["name"] = e.name;
        segments.push_back(MakeSegment("file", std::move(data)));
        break;
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  Action action;
  const bool group = message.target_type == domain::TargetType::kGroup;
  action.action = group ? "send_group_msg" : "send_private_msg";
  action.params[group ? "group_id" : "user_id"] = ToInt64(message.target_id);
  action.params["message"] = std::move(segments);
  return action;
}

Action EncodeGetMsg(std::string_view message_id) {
  Action action;
  action.action = "get_msg";
  if (IsDecimalId(message_id)) {
    action.params["message_id"] = ToInt64(message_id);
  } else {
    action.params["message_id"] = message_id;
  }
  return action;
}

bool WantsForward(const domain::OutgoingMessage& message) {
  if (message.form != domain::ReplyForm::kForward) return false;
  bool has_text = false;
  for (const MessageElement& e : message.chain) {
    switch (e.type) {
      case ElementType::kPlain:
        has_text = has_text || !e.text.empty();
        break;
      case ElementType::kAt:
      case ElementType::kAtAll:
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
      default:
        return false;  // LangBot forwards only replies made of text
    }
  }
  return has_text;
}

util::Result<Action> EncodeForward(const domain::OutgoingMessage& message, std::string_view self_id,
                                   std::string_view nickname) {
  if (!WantsForward(message)) return Invalid("message_chain holds no text for a forward message");
  if (!IsDecimalId(message.target_id)) return Invalid("the target id must be a number");
  std::string text;
  for (const MessageElement& e : message.chain) {
    if (e.type == ElementType::kPlain) text += e.text;
  }
  JsonArray content{MakeSegment("text", JsonObject{{"text", std::move(text)}})};
  const std::string uin = IsDecimalId(self_id) ? std::string(self_id) : std::string("10000");
  JsonObject node{{"user_id", uin},
                  {"nickname", nickname},
                  {"uin", uin},
                  {"name", nickname},
                  {"content", std::move(content)}};
  Action action;
  const bool group = message.target_type == domain::TargetType::kGroup;
  action.action = group ? "send_group_forward_msg" : "send_private_forward_msg";
  action.params[group ? "group_id" : "user_id"] = ToInt64(message.target_id);
  action.params["messages"] = JsonArray{MakeSegment("node", std::move(node))};
  return action;
}

std::string EncodeActionFrame(const Action& action, std::string_view echo) {
  JsonObject frame{{"action", action.action}, {"params", action.params}, {"echo", echo}};
  return util::SerializeJson(frame);
}

}  // namespace sb::platforms::onebot
