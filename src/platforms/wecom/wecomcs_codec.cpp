#include "platforms/wecom/wecomcs_codec.hpp"

#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/wecom/wecom_callback.hpp"
#include "platforms/wecom/wecom_codec.hpp"
#include "platforms/wecom/wecom_outgoing.hpp"

namespace sb::platforms::wecom {
namespace {

using domain::ElementType;

}  // namespace

util::Result<KfNudge> DecodeKfNudge(const common::WeChatFields& fields) {
  const std::string type = std::string(common::FieldOr(fields, "MsgType"));
  const std::string event = std::string(common::FieldOr(fields, "Event"));
  if (type != "event" || event != "kf_msg_or_event") {
    return common::Invalid("not a kf_msg_or_event callback (MsgType " + type.substr(0, 32) +
                           ", Event " + event.substr(0, 32) + ")");
  }
  KfNudge nudge{std::string(common::FieldOr(fields, "Token")),
                std::string(common::FieldOr(fields, "OpenKfId"))};
  if (nudge.token.size() > 256 || nudge.open_kfid.size() > kMaxIdBytes) {
    return common::Invalid("Token or OpenKfId is too long");
  }
  return nudge;
}

std::string EncodeSyncRequest(std::string_view cursor, std::string_view token,
                              std::string_view open_kfid) {
  util::JsonObject body;
  if (!cursor.empty()) body["cursor"] = cursor;
  if (!token.empty()) body["token"] = token;
  body["limit"] = kSyncLimit;
  body["voice_format"] = 0;
  if (!open_kfid.empty()) body["open_kfid"] = open_kfid;
  return util::SerializeJson(body);
}

util::Result<SyncPage> DecodeSyncPage(const util::JsonObject& answer) {
  SyncPage page;
  page.next_cursor = std::string(common::StringOr(answer, "next_cursor"));
  if (page.next_cursor.size() > 256) return common::Invalid("next_cursor is too long");
  page.has_more =
      common::IntField(answer, "has_more").value_or(0) != 0 || common::IsTrue(answer, "has_more");
  const util::JsonArray* list = common::ArrayField(answer, "msg_list");
  if (list == nullptr) {
    if (answer.contains("msg_list")) return common::Invalid("msg_list is not an array");
    return page;
  }
  if (list->size() > static_cast<std::size_t>(kSyncLimit)) {
    return common::Invalid("msg_list holds more than 1000 messages");
  }
  for (const auto& item : *list) {
    if (item.is_object()) page.messages.push_back(item.as_object());
  }
  return page;
}

util::Result<KfInbound> DecodeKfMessage(const util::JsonObject& msg) {
  KfInbound in;
  in.msgid = std::string(common::StringOr(msg, "msgid"));
  if (in.msgid.empty()) return common::Invalid("msgid is required");
  if (in.msgid.size() > kMaxIdBytes) return common::Invalid("msgid is too long");
  in.open_kfid = std::string(common::StringOr(msg, "open_kfid"));
  in.external_userid = std::string(common::StringOr(msg, "external_userid"));
  in.send_time = common::IntField(msg, "send_time").value_or(0);
  const auto origin = common::IntField(msg, "origin").value_or(0);
  const std::string type(common::StringOr(msg, "msgtype"));
  if (origin != kOriginCustomer) {
    in.skipped = origin == 5 ? "a servicer's message" : "not a customer's message";
    return in;
  }
  if (!IsWeComId(in.external_userid)) return common::Invalid("external_userid is missing or bad");
  if (!IsWeComId(in.open_kfid)) return common::Invalid("open_kfid is missing or bad");
  if (type != "text" && type != "image") {
    in.skipped = type.substr(0, 32) + " messages are not taken";
    return in;
  }
  domain::ReceivedMessage message;
  message.chat_type = domain::TargetType::kPerson;
  message.chat_id = kUserPrefix + in.external_userid;
  message.sender_id = message.chat_id;
  message.sender_name = in.external_userid;
  message.message_id = in.msgid;
  message.chain.push_back(Element(ElementType::kSource, in.msgid));
  if (type == "text") {
    const util::JsonObject* text = common::ObjectField(msg, "text");
    std::string content(text ? common::StringOr(*text, "content") : std::string_view());
    if (content.empty()) return common::Invalid("text.content is required");
    if (content.size() > kMaxReceivedTextBytes) content.resize(kMaxReceivedTextBytes);
    common::AppendPlain(message.chain, content);
  } else {
    const util::JsonObject* image = common::ObjectField(msg, "image");
    in.media_id = std::string(image ? common::StringOr(*image, "media_id") : std::string_view());
    if (in.media_id.empty() || in.media_id.size() > 512) {
      return common::Invalid("image.media_id is missing or too long");
    }
    in.image_element = message.chain.size();
    message.chain.push_back(Element(ElementType::kImage, {}));
  }
  in.message = std::move(message);
  return in;
}

util::Result<KfTarget> ParseKfTarget(std::string_view target_id) {
  const auto bar = target_id.find('|');
  if (bar != std::string_view::npos) {
    KfTarget target{std::string(target_id.substr(0, bar)), std::string(target_id.substr(bar + 1))};
    if (IsWeComId(target.external_userid) && IsWeComId(target.open_kfid)) return target;
  } else if (target_id.size() > 1 && target_id.front() == kUserPrefix &&
             IsWeComId(target_id.substr(1))) {
    return KfTarget{std::string(target_id.substr(1)), {}};
  }
  return common::Invalid(
      "target_id: a customer is addressed as <external_userid>|<open_kfid> or, as in its "
      "session id, u<external_userid>");
}

util::Result<void> CheckKfDeliverable(const domain::OutgoingMessage& message) {
  if (message.target_type != domain::TargetType::kPerson) {
    return common::Invalid("target_type: WeCom customer-service chats have no groups");
  }
  if (auto target = ParseKfTarget(message.target_id); !target) {
    return tl::unexpected(target.error());
  }
  return CheckChain(message.chain);
}

std::string EncodeKfText(const KfTarget& to, std::string_view text) {
  return util::SerializeJson(util::JsonObject{{"touser", to.external_userid},
                                              {"open_kfid", to.open_kfid},
                                              {"msgtype", "text"},
                                              {"text", util::JsonObject{{"content", text}}}});
}

std::string EncodeKfMedia(const KfTarget& to, std::string_view msgtype, std::string_view media_id) {
  return util::SerializeJson(
      util::JsonObject{{"touser", to.external_userid},
                       {"open_kfid", to.open_kfid},
                       {"msgtype", msgtype},
                       {std::string(msgtype), util::JsonObject{{"media_id", media_id}}}});
}

}  // namespace sb::platforms::wecom
