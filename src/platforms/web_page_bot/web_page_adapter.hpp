// The `web_page_bot` adapter: an embeddable chat widget for websites. Everything runs on the bot's
// own URL (/bots/{uuid}/...): the widget script a site includes (GET widget.js), a full-page chat
// (GET / or /chat), the Turnstile check (POST session, when a secret key is configured), and one
// WebSocket per visitor tab (GET ws, upgraded) on which the visitor's messages arrive and the
// bot's replies go out. Each visitor is a private session named by the random id the widget keeps
// in localStorage. The frames and assets are in web_page_codec.hpp / web_page_assets.hpp, the
// bounds on visitors in web_page_visitors.hpp.
//   auto adapter = MakeWebPageAdapter(std::move(context));  // config: title, language,
//       turnstile_site_key, turnstile_secret_key, api_base_url (the siteverify base)
#pragma once

#include <memory>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::web_page {

std::unique_ptr<PlatformAdapter> MakeWebPageAdapter(AdapterContext context);

}  // namespace sb::platforms::web_page
