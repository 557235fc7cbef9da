// What the web page bot serves to browsers: the widget script a site includes
// (`<script src=".../bots/<uuid>/widget.js" async></script>`), the full-page chat for a link or an
// iframe, and the UI texts in the bot's language. Pure: the script is ours, self-contained (no
// CDN, no framework), and draws in a shadow root so the host page's CSS does not reach it.
//   WidgetSettings s{.title = "Help", .language = "zh_Hans", .site_key = ""};
//   std::string js = RenderWidgetScript(s);          // application/javascript
//   std::string html = RenderChatPage(s, "widget.js");  // text/html
#pragma once

#include <string>
#include <string_view>

#include "util/json.hpp"

namespace sb::platforms::web_page {

struct WidgetSettings {
  std::string title;
  std::string language;  // LangBot's codes: en_US, zh_Hans, zh_Hant, ja_JP, es_ES, ru_RU, ...
  std::string site_key;  // Turnstile; empty when verification is off
};

// The UI texts for `language` (en_US for one we have no texts for) as {"send": ..., ...}.
util::JsonObject UiTexts(std::string_view language);
// The HTML lang attribute for `language` ("zh-Hans", "en").
std::string HtmlLanguage(std::string_view language);

std::string RenderWidgetScript(const WidgetSettings& settings);
// `script_url` is how the page refers to the widget script (relative to the page).
std::string RenderChatPage(const WidgetSettings& settings, std::string_view script_url);
// The page's Content-Security-Policy: our script and socket only, plus Cloudflare's challenge
// when Turnstile is on.
std::string ChatPagePolicy(bool turnstile);

// The snippet a site pastes, for the script at `script_url` (absolute).
std::string EmbedSnippet(std::string_view script_url);

}  // namespace sb::platforms::web_page
