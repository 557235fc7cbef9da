// The `wecomcs` adapter (WeCom customer service, 微信客服): WeCom posts an encrypted
// kf_msg_or_event callback to /bots/{uuid} (checked and acknowledged at once); the adapter then
// pulls the messages with /cgi-bin/kf/sync_msg from its cursor (one pull at a time per bot, page
// after page while has_more), hands each customer message on once, and answers through
// /cgi-bin/kf/send_msg. The wire format is in wecomcs_codec.hpp; the cursors outlive the adapter
// in a KfCursorStore (wecomcs_cursors.hpp).
//   auto adapter = MakeWeComCsAdapter(std::move(context), cursors);  // config as `wecom`
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"
#include "platforms/wecom/wecomcs_cursors.hpp"

namespace sb::platforms::wecom {

// `cursors` is shared by every wecomcs adapter of the process (keyed by bot uuid).
std::unique_ptr<PlatformAdapter> MakeWeComCsAdapter(AdapterContext context,
                                                    std::shared_ptr<KfCursorStore> cursors);

}  // namespace sb::platforms::wecom
