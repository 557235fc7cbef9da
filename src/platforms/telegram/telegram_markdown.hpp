// Telegram's MarkdownV2: escaping text, and converting common Markdown to it.
//   params["text"] = MarkdownToMarkdownV2("**Done**: see [docs](https://example.com)");
//   params["parse_mode"] = "MarkdownV2";
#pragma once

#include <string>
#include <string_view>

namespace sb::platforms::telegram {

// `text` with every MarkdownV2-reserved character (and '\') escaped: shown literally.
std::string EscapeMarkdownV2(std::string_view text);
// Common Markdown (**bold**, __bold__, *italic*, _italic_, ~~strike~~, `code`, ``` blocks,
// [text](url), # headings as bold, "- " bullets, "> " quotes) as MarkdownV2. Whatever is not
// recognised is escaped, so the result always parses.
std::string MarkdownToMarkdownV2(std::string_view markdown);

}  // namespace sb::platforms::telegram
