// The `wechatpad` adapter: a personal WeChat account logged in on a WeChatPadPro server. At start
// the account's login state is checked (GET /login/GetLoginStatus) and its wxid read
// (GET /user/GetProfile); messages arrive on the WebSocket `{wechatpad_ws}/GetSyncMsg?key=<token>`
// (reconnected with backoff); answers and send_message go out through the HTTP API. There is no
// official API documentation: the calls and frame shapes are those LangBot's adapter and its
// libs/wechatpad_api client use (wechatpad_codec.hpp).
//   auto adapter = MakeWeChatPadAdapter(std::move(context));
//   // config: wechatpad_url, wechatpad_ws, token, wxid, api_base_url (admin_key is not used)
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::wechatpad {

std::unique_ptr<PlatformAdapter> MakeWeChatPadAdapter(AdapterContext context);

}  // namespace sb::platforms::wechatpad
