#include "domain/message_text.hpp"

#include <string_view>
#include <utility>

namespace sb::domain {

std::string DescribeChain(const MessageChain& chain) {
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
        out += "@" + e.target + " ";
        break;
      case ElementType::kAtAll:
        out += "@all ";
        break;
      case ElementType::kVoice:
        out += "[Voice]";
        break;
      case ElementType::kQuote:
        out += "[Quote] ";
        break;
      case ElementType::kFile:
        out += "[File " + e.name + "]";
        break;
      case ElementType::kSource:
        break;
    }
  }
  return out;
}

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
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  text += "…";
  return text;
}

MessageElement MakeQuote(std::string id, std::string quoted_text, std::string sender) {
  MessageElement quote;
  quote.type = ElementType::kQuote;
  quote.id = std::move(id);
  quote.target = std::move(sender);
  // Cut in place at a UTF-8 boundary, leaving room for the "…" so the bound holds with it.
  constexpr std::string_view kEllipsis = "…";
  if (quoted_text.size() > kMaxQuotedTextBytes) {
    std::size_t cut = kMaxQuotedTextBytes - kEllipsis.size();
    while (cut > 0 && (static_cast<unsigned char>(quoted_text[cut]) & 0xC0) == 0x80) --cut;
    quoted_text.resize(cut);
    quoted_text.append(kEllipsis);
  }
  quote.text = std::move(quoted_text);
  return quote;
}

std::string QuotableText(const MessageChain& chain) {
  std::string out;
  for (const auto& e : chain) {
    switch (e.type) {
      case ElementType::kPlain:
        out += e.text;
        break;
      case ElementType::kAt:
        out += "@" + e.target;
        break;
      case ElementType::kAtAll:
        out += "@all";
        break;
      case ElementType::kImage:
        out += "[Image]";
        break;
      case ElementType::kVoice:
        out += "[Voice]";
        break;
      case ElementType::kFile:
        out += "[File " + e.name + "]";
        break;
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  return out;
}

std::vector<std::string> QuotedTextsOf(const MessageChain& chain) {
  std::vector<std::string> out;
  for (const auto& e : chain) {
    if (e.type == ElementType::kQuote && !e.text.empty()) out.push_back(e.text);
  }
  return out;
}

}  // namespace sb::domain
