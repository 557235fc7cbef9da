// The WeCom AI bot adapter (企业微信智能机器人, LangBot's "wecombot"): the WebSocket long
// connection (default; aibot_subscribe, ping, aibot_msg_callback, replies with aibot_respond_msg
// and proactive aibot_send_msg) or, with `enable-webhook`, encrypted JSON callbacks answered with
// stream replies that WeCom polls. See docs/adapters/wecombot.md.
//   deps.adapters["wecombot"] = platforms::wecombot::MakeWeComBotAdapter;
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::wecombot {

std::unique_ptr<PlatformAdapter> MakeWeComBotAdapter(AdapterContext context);

}  // namespace sb::platforms::wecombot
