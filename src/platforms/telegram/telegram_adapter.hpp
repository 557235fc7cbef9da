// The `telegram` adapter: Bot API long polling (getUpdates) or a webhook registered with
// setWebhook, replies by sendMessage / sendPhoto / sendVoice / sendDocument. The wire format is in
// telegram_codec.hpp; the protocol notes are in shared/protocols/platforms.md, Part 2.
//   auto adapter = MakeTelegramAdapter(std::move(context));
//   // config: token, markdown_card, api_base_url, mode ("polling" | "webhook")
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::telegram {

std::unique_ptr<PlatformAdapter> MakeTelegramAdapter(AdapterContext context);

}  // namespace sb::platforms::telegram
