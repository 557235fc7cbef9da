#include "platforms/wecom/wecom_outgoing.hpp"

#include <fmt/format.h>

#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/text_units.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::wecom {
namespace {

using domain::ElementType;

std::size_t Utf8Bytes(char32_t cp) {
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp < 0x10000) return 3;
  return 4;
}

OutgoingPart MediaPart(PartKind kind, std::string url, std::string base64, std::string name) {
  OutgoingPart part;
  part.kind = kind;
  part.url = std::move(url);
  part.base64 = std::move(base64);
  part.name = std::move(name);
  return part;
}

void FlushText(std::string& text, std::vector<OutgoingPart>& parts) {
  for (std::string& piece : SplitUtf8Bytes(text, kMaxTextBytes)) {
    if (piece.find_first_not_of(" \n\r\t") == std::string::npos) continue;
    OutgoingPart part;
    part.text = std::move(piece);
    parts.push_back(std::move(part));
  }
  text.clear();
}

}  // namespace

std::vector<std::string> SplitUtf8Bytes(std::string_view text, std::size_t max_bytes) {
  return common::SplitWeightedDroppingSeparator(text, max_bytes, Utf8Bytes);
}

std::vector<OutgoingPart> PlanParts(const domain::MessageChain& chain) {
  std::vector<OutgoingPart> parts;
  std::string text;
  for (const auto& element : chain) {
    switch (element.type) {
      case ElementType::kPlain:
        text += element.text;
        break;
      case ElementType::kAt:
        text += "@" + element.target + " ";
        break;
      case ElementType::kAtAll:
        text += "@all ";
        break;
      case ElementType::kImage:
        FlushText(text, parts);
        parts.push_back(MediaPart(PartKind::kImage, element.url, element.base64, {}));
        break;
      case ElementType::kFile:
        FlushText(text, parts);
        parts.push_back(
            MediaPart(PartKind::kFile, element.url, {},
                      element.name.empty() ? FileNameFromUrl(element.url, "file") : element.name));
        break;
      case ElementType::kVoice:  // refused by CheckChain
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  FlushText(text, parts);
  return parts;
}

util::Result<void> CheckChain(const domain::MessageChain& chain) {
  bool something = false;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const auto& element = chain[i];
    const std::string where = fmt::format("message_chain[{}]", i);
    switch (element.type) {
      case ElementType::kVoice:
        return common::Invalid(where + ": WeCom takes voice only as AMR, which cannot be sent");
      case ElementType::kImage:
        if (element.url.empty() && element.base64.empty()) {
          return common::Invalid(where + ": Image needs a url or base64");
        }
        if (!element.url.empty() && element.url.rfind("http://", 0) != 0 &&
            element.url.rfind("https://", 0) != 0 && element.base64.empty()) {
          return common::Invalid(where + ": Image url must be http(s)");
        }
        something = true;
        break;
      case ElementType::kFile:
        if (element.url.rfind("http://", 0) != 0 && element.url.rfind("https://", 0) != 0) {
          return common::Invalid(where + ": File needs an http(s) url");
        }
        something = true;
        break;
      case ElementType::kPlain:
        if (element.text.find_first_not_of(" \n\r\t") != std::string::npos) something = true;
        break;
      case ElementType::kAt:
      case ElementType::kAtAll:
        something = true;
        break;
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  if (!something) return common::Invalid("message_chain: nothing WeCom can show");
  return util::Ok();
}

util::Result<std::string> DecodeImageBase64(std::string_view text) {
  if (text.rfind("data:", 0) == 0) {
    const auto comma = text.find(',');
    if (comma == std::string_view::npos) return common::Invalid("Image base64: malformed data URL");
    text.remove_prefix(comma + 1);
  }
  std::string bytes;
  if (text.size() > kMaxUploadBytes / 3 * 4 + 8) {
    return common::Invalid("Image base64: larger than the 10 MB WeCom takes");
  }
  if (!util::Base64Decode(text, bytes) || bytes.empty()) {
    return common::Invalid("Image base64: not base64");
  }
  return bytes;
}

domain::MessageElement Element(domain::ElementType type, std::string id) {
  domain::MessageElement element;
  element.type = type;
  element.id = std::move(id);
  return element;
}

bool IsWeComId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '@' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string FileNameFromUrl(std::string_view url, std::string_view fallback) {
  std::string_view path = url.substr(0, url.find_first_of("?#"));
  const auto slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (name.empty() || name.size() > 128 || path.find("://") + 3 > slash) {
    return std::string(fallback);
  }
  for (char c : name) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      return std::string(fallback);
    }
  }
  return std::string(name);
}

}  // namespace sb::platforms::wecom
