// The `slack` adapter: Slack's Events API posts to the bot's webhook route /bots/{uuid}
// (verified with the app's signing secret, acknowledged at once), and replies and send_message go
// out through chat.postMessage with the bot token. The wire format is in slack_codec.hpp.
//   auto adapter = MakeSlackAdapter(std::move(context));  // config: bot_token, signing_secret,
//                                                         // api_base_url
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::slack {

std::unique_ptr<PlatformAdapter> MakeSlackAdapter(AdapterContext context);

}  // namespace sb::platforms::slack
