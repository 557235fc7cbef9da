// The `LINE` adapter: the LINE platform posts webhook events to the bot's route /bots/{uuid}
// (checked with the channel secret, acknowledged at once); replies use the event's reply token and
// fall back to push when it has expired or was used; send_message pushes. The wire format is in
// line_codec.hpp.
//   auto adapter = MakeLineAdapter(std::move(context));  // config: channel_access_token,
//                                                        // channel_secret, api_base_url
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::line {

std::unique_ptr<PlatformAdapter> MakeLineAdapter(AdapterContext context);

}  // namespace sb::platforms::line
