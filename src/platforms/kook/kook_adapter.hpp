// The `kook` adapter (KOOK, formerly Kaiheila): the WebSocket gateway (gateway/index, HELLO, PING
// every 30 ± 5 s with the last sn, PONG within 6 s, events in sn order, RESUME after a drop,
// RECONNECT) for incoming messages, REST v3 message/create and direct-message/create for replies
// and send_message, images through asset/create, 429s waited out. The wire format is in
// kook_codec.hpp and kook_signals.hpp; the protocol notes in shared/protocols/platforms.md 4.7.
//   auto adapter = MakeKookAdapter(std::move(context));
//   // config: token, api_base_url (default https://www.kookapp.cn/api; /v3/... is appended)
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::kook {

std::unique_ptr<PlatformAdapter> MakeKookAdapter(AdapterContext context);

}  // namespace sb::platforms::kook
