// The `discord` adapter: Gateway v10 over a WebSocket (HELLO, heartbeats, IDENTIFY, RESUME after a
// drop, opcodes 7 and 9) for incoming messages, REST v10 Create Message for replies and
// send_message (opening or reusing DM channels), with 429s honoured. The wire format is in
// discord_codec.hpp; the protocol notes are in shared/protocols/platforms.md 4.2.
//   auto adapter = MakeDiscordAdapter(std::move(context));
//   // config: token, client_id, api_base_url (default https://discord.com/api; /v10 is appended)
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::discord {

std::unique_ptr<PlatformAdapter> MakeDiscordAdapter(AdapterContext context);

}  // namespace sb::platforms::discord
