#include "platforms/wecom/wecom_codec.hpp"

#include <charconv>
#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/wecom/wecom_callback.hpp"
#include "platforms/wecom/wecom_outgoing.hpp"
#include "util/json.hpp"

namespace sb::platforms::wecom {
namespace {

using domain::ElementType;

bool IsDecimal(std::string_view s) {
  if (s.empty() || s.size() > 12) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::int64_t AgentNumber(std::string_view agent_id) {
  std::int64_t n = 0;
  std::from_chars(agent_id.data(), agent_id.data() + agent_id.size(), n);
  return n;
}

}  // namespace

util::Result<AppInbound> DecodeAppMessage(const common::WeChatFields& fields) {
  AppInbound in;
  in.user_id = std::string(common::FieldOr(fields, "FromUserName"));
  const std::string type = std::string(common::FieldOr(fields, "MsgType"));
  if (in.user_id.empty()) return common::Invalid("FromUserName is required");
  if (type.empty()) return common::Invalid("MsgType is required");
  if (in.user_id.size() > kMaxIdBytes) return common::Invalid("FromUserName is too long");
  in.agent_id = std::string(common::FieldOr(fields, "AgentID"));
  if (!in.agent_id.empty() && !IsDecimal(in.agent_id)) {
    return common::Invalid("AgentID is not a number");
  }
  const std::string msg_id = std::string(common::FieldOr(fields, "MsgId"));
  if (msg_id.size() > kMaxIdBytes) return common::Invalid("MsgId is too long");
  in.dedupe_key = !msg_id.empty() ? "m:" + msg_id
                                  : "e:" + in.user_id + ":" +
                                        std::string(common::FieldOr(fields, "CreateTime")) + ":" +
                                        std::string(common::FieldOr(fields, "Event"));
  if (type == "event") {
    in.skipped = "event " + std::string(common::FieldOr(fields, "Event")).substr(0, 64);
    return in;
  }
  if (type != "text" && type != "image") {
    in.skipped = type.substr(0, 32) + " messages are not taken";
    return in;
  }
  domain::ReceivedMessage message;
  message.chat_type = domain::TargetType::kPerson;
  message.chat_id = kUserPrefix + in.user_id;
  message.sender_id = message.chat_id;
  message.sender_name = in.user_id;
  message.message_id = msg_id;
  message.chain.push_back(Element(ElementType::kSource, msg_id));
  if (type == "text") {
    std::string content = std::string(common::FieldOr(fields, "Content"));
    if (content.empty()) return common::Invalid("Content is required in a text message");
    if (content.size() > kMaxReceivedTextBytes) content.resize(kMaxReceivedTextBytes);
    common::AppendPlain(message.chain, content);
  } else {
    in.media_id = std::string(common::FieldOr(fields, "MediaId"));
    in.pic_url = std::string(common::FieldOr(fields, "PicUrl"));
    if (in.media_id.empty() && in.pic_url.empty()) {
      return common::Invalid("an image message needs MediaId or PicUrl");
    }
    if (in.media_id.size() > 512 || in.pic_url.size() > 2048) {
      return common::Invalid("MediaId or PicUrl is too long");
    }
    in.image_element = message.chain.size();
    message.chain.push_back(Element(ElementType::kImage, {}));
  }
  in.message = std::move(message);
  return in;
}

util::Result<AppTarget> ParseAppTarget(std::string_view target_id) {
  const auto bar = target_id.find('|');
  if (bar != std::string_view::npos) {
    AppTarget target{std::string(target_id.substr(0, bar)), std::string(target_id.substr(bar + 1))};
    if (IsWeComId(target.user_id) && IsDecimal(target.agent_id)) return target;
  } else if (target_id.size() > 1 && target_id.front() == kUserPrefix &&
             IsWeComId(target_id.substr(1))) {
    return AppTarget{std::string(target_id.substr(1)), {}};
  }
  return common::Invalid(
      "target_id: a WeCom user is addressed as <userid>|<agentid> or, as in its session id, "
      "u<userid>");
}

util::Result<void> CheckAppDeliverable(const domain::OutgoingMessage& message) {
  if (message.target_type != domain::TargetType::kPerson) {
    return common::Invalid("target_type: WeCom application chats have no groups");
  }
  if (auto target = ParseAppTarget(message.target_id); !target) {
    return tl::unexpected(target.error());
  }
  return CheckChain(message.chain);
}

std::string EncodeAppText(std::string_view user_id, std::string_view agent_id,
                          std::string_view text) {
  util::JsonObject body{{"touser", user_id},
                        {"msgtype", "text"},
                        {"agentid", AgentNumber(agent_id)},
                        {"text", util::JsonObject{{"content", text}}},
                        {"safe", 0},
                        {"enable_id_trans", 0},
                        {"enable_duplicate_check", 0}};
  return util::SerializeJson(body);
}

std::string EncodeAppMedia(std::string_view user_id, std::string_view agent_id,
                           std::string_view msgtype, std::string_view media_id) {
  util::JsonObject body{{"touser", user_id},
                        {"msgtype", msgtype},
                        {"agentid", AgentNumber(agent_id)},
                        {std::string(msgtype), util::JsonObject{{"media_id", media_id}}},
                        {"safe", 0}};
  return util::SerializeJson(body);
}

}  // namespace sb::platforms::wecom
