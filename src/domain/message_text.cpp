#include "domain/message_text.hpp"

#include <string_view>
#include <utility>

#include "util/utf8.hpp"

namespace sb::domain {

namespace {

// A chain as text: for the event log (`for_log`: mentions spaced from what follows, quotes
// marked) or as the text a quoting message carries (mentions bare, quotes left out).
std::string Render(const MessageChain& chain, bool for_log) {
  std::string out;
  for (const auto& e : chain) {
    switch (e.type) {
      case ElementType::kPlain:
        out += e.text;
        break;
      case ElementType::kImage:
        out += "[Image]";
        break;
      case ElementType::kAt:
        out.append("@").append(e.target);
        if (for_log) out += ' ';
        break;
      case ElementType::kAtAll:
        out += for_log ? "@all " : "@all";
        break;
      case ElementType::kVoice:
        out += "[Voice]";
        break;
      case ElementType::kQuote:
        if (for_log) out += "[Quote] ";
        break;
      case ElementType::kFile:
        out.append("[File ").append(e.name).append("]");
        break;
      case ElementType::kSource:
        break;
    }
  }
  return out;
}

}  // namespace

std::string DescribeChain(const MessageChain& chain) { return Render(chain, true); }

std::string PlainTextOf(const MessageChain& chain) {
  std::string out;
  for (const auto& e : chain) {
    if (e.type == ElementType::kPlain) out += e.text;
  }
  return out;
}

std::vector<std::string> ImageUrlsOf(const MessageChain& chain) {
  std::vector<std::string> out;
  for (const auto& e : chain) {
    if (e.type != ElementType::kImage) continue;
    if (e.url.starts_with("http://") || e.url.starts_with("https://")) out.push_back(e.url);
  }
  return out;
}

std::string TruncateUtf8(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  text.resize(util::Utf8CutPoint(text, max_bytes));
  text += "…";
  return text;
}

MessageElement MakeQuote(std::string id, std::string quoted_text, std::string sender) {
  MessageElement quote;
  quote.type = ElementType::kQuote;
  quote.id = std::move(id);
  quote.target = std::move(sender);
  // Room is left for the "…" so the bound holds with it.
  constexpr std::string_view kEllipsis = "…";
  if (quoted_text.size() > kMaxQuotedTextBytes) {
    quoted_text.resize(util::Utf8CutPoint(quoted_text, kMaxQuotedTextBytes - kEllipsis.size()));
    quoted_text.append(kEllipsis);
  }
  quote.text = std::move(quoted_text);
  return quote;
}

std::string QuotableText(const MessageChain& chain) { return Render(chain, false); }

std::vector<std::string> QuotedTextsOf(const MessageChain& chain) {
  std::vector<std::string> out;
  for (const auto& e : chain) {
    if (e.type == ElementType::kQuote && !e.text.empty()) out.push_back(e.text);
  }
  return out;
}

}  // namespace sb::domain
