// The `dingtalk` adapter (Stream mode): a WebSocket long connection opened with a ticket from
// /v1.0/gateway/connections/open, every frame acknowledged by its messageId, pings echoed,
// reconnects with backoff; robot messages from one-to-one chats and group @-mentions handed to the
// host; replies through the message's session webhook while it is valid, else the robot OpenAPI
// (which send_message uses too). A robot in "HTTP mode" may post the same messages to the bot's
// URL /bots/{uuid} instead, signed with the app secret. The wire format is in dingtalk_codec.hpp.
//   auto adapter = MakeDingTalkAdapter(std::move(context));  // config: client_id, client_secret,
//                                       // robot_code, robot_name, markdown_card, api_base_url
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::dingtalk {

std::unique_ptr<PlatformAdapter> MakeDingTalkAdapter(AdapterContext context);

}  // namespace sb::platforms::dingtalk
