// The `aiocqhttp` adapter: OneBot v11 over a reverse WebSocket. The OneBot implementation (NapCat,
// Lagrange, go-cqhttp) dials ws://<host>:<port>/ws; events arrive on that socket and replies go
// back on it as send_private_msg / send_group_msg actions matched by `echo`. The wire format is in
// onebot_codec.hpp; the protocol notes are in shared/protocols/platforms.md, Part 3.
//   auto adapter = MakeOneBotAdapter(std::move(context));
//   // config: host, port, access-token
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::onebot {

std::unique_ptr<PlatformAdapter> MakeOneBotAdapter(AdapterContext context);

}  // namespace sb::platforms::onebot
