// The Lark / Feishu adapter: events by the long connection (LangBot's default) or, with
// `enable-webhook`, on the bot's webhook route; replies and sends through the im/v1 Open API.
//   auto adapter = MakeLarkAdapter(std::move(context));
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::lark {

std::unique_ptr<PlatformAdapter> MakeLarkAdapter(AdapterContext context);

}  // namespace sb::platforms::lark
