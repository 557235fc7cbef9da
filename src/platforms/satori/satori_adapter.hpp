// The `satori` adapter: a Satori v1 application (satori.chat protocol). Events arrive on the SDK's
// WebSocket `{base}/v1/events` (IDENTIFY with the token and the last sn, READY naming the logins,
// PING every 10 s, reconnect with backoff and resume); answers and send_message go out through
// the HTTP API (message.create, user.channel.create for a person). Wire formats are in
// satori_codec.hpp and satori_elements.hpp; the HTTP side is satori_api.hpp.
//   auto adapter = MakeSatoriAdapter(std::move(context));
//   // config: platform, token, satori_api_base_url, satori_endpoint (or host/port, or
//   // api_base_url for the server's root)
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::satori {

std::unique_ptr<PlatformAdapter> MakeSatoriAdapter(AdapterContext context);

}  // namespace sb::platforms::satori
