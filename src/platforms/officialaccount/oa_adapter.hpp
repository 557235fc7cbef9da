// The `officialaccount` adapter (WeChat Official Accounts): WeChat posts each message to the bot's
// route /bots/{uuid} as XML, in plaintext or safe (AES) mode, and wants the answer within 5
// seconds, retrying twice. Two ways to fit a model's slower answer into that, as LangBot does
// (config `Mode`): `drop` holds each attempt up to 4.5 s and answers whichever attempt the reply
// is ready for; `passive` answers `LoadingMessage` at once and hands the reply out on the user's
// next message. Replies too late for any attempt, and send_message, go through the
// customer-service API (accounts that have it). The wire format is in oa_codec.hpp.
//   auto adapter = MakeOfficialAccountAdapter(std::move(context));  // config: token,
//       // EncodingAESKey, AppID, AppSecret, Mode, LoadingMessage, api_base_url
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::officialaccount {

std::unique_ptr<PlatformAdapter> MakeOfficialAccountAdapter(AdapterContext context);

}  // namespace sb::platforms::officialaccount
