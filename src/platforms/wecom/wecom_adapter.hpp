// The `wecom` adapter (a WeCom internal application): WeCom posts encrypted XML callbacks to the
// bot's route /bots/{uuid} (checked, decrypted, acknowledged at once, redeliveries answered
// once); replies and send_message go through /cgi-bin/message/send with the app's access token.
// The wire format is in wecom_codec.hpp, what it shares with `wecomcs` in wecom_base.hpp.
//   auto adapter = MakeWeComAdapter(std::move(context));  // config: corpid, secret, token,
//                                                          // EncodingAESKey, api_base_url
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::wecom {

std::unique_ptr<PlatformAdapter> MakeWeComAdapter(AdapterContext context);

}  // namespace sb::platforms::wecom
