// The generic `webhook` adapter: a remote backend POSTs signed messages to /bots/{uuid}, and
// replies and send_message go by signed POST to the bot's `callback_url`. The wire format is in
// webhook_codec.hpp and docs/webhook.md.
//   auto adapter = MakeWebhookAdapter(std::move(context));  // config: secret, callback_url
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::webhook {

std::unique_ptr<PlatformAdapter> MakeWebhookAdapter(AdapterContext context);

}  // namespace sb::platforms::webhook
