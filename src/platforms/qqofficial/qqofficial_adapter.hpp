// The `qqofficial` adapter (QQ official bot API v2). Webhook mode (enable-webhook on): QQ posts
// callbacks to the bot's route /bots/{uuid}, Ed25519-signed with the bot secret; op 13 is
// answered with its signature, dispatches are acknowledged at once (op 12) and handed on.
// WebSocket mode (off): the gateway of qqofficial_gateway.hpp. Replies are passive (msg_id +
// msg_seq) through qqofficial_rest.hpp. The wire format is in qqofficial_codec.hpp.
//   auto adapter = MakeQqOfficialAdapter(std::move(context));  // config: appid, secret,
//                                                              // enable-webhook, api_base_url
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::qqofficial {

std::unique_ptr<PlatformAdapter> MakeQqOfficialAdapter(AdapterContext context);

}  // namespace sb::platforms::qqofficial
