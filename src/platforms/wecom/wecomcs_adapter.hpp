// The `wecomcs` adapter (WeCom customer service, 微信客服): WeCom posts an encrypted
// kf_msg_or_event callback to /bots/{uuid} (checked and acknowledged at once); the adapter then
// pulls the messages with /cgi-bin/kf/sync_msg from its cursor (one pull at a time per bot, page
// after page while has_more), hands each customer message on once, and answers through
// /cgi-bin/kf/send_msg. The wire format is in wecomcs_codec.hpp.
//   auto adapter = MakeWeComCsAdapter(std::move(context));  // config as `wecom`
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::wecom {

std::unique_ptr<PlatformAdapter> MakeWeComCsAdapter(AdapterContext context);

}  // namespace sb::platforms::wecom
