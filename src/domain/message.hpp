// The message model shared by every adapter: a chain of elements. Conversion to and from a
// platform's own format happens only inside that platform's adapter.
#pragma once

#include <string>
#include <vector>

namespace sb::domain {

enum class ElementType { kPlain, kImage, kAt, kAtAll, kVoice, kQuote, kFile, kSource };

// "Plain", "Image", ... (LangBot's names). Parse returns false for an unknown name.
const char* ElementTypeName(ElementType type);
bool ParseElementType(std::string_view name, ElementType& out);

struct MessageElement {
  ElementType type = ElementType::kPlain;
  std::string text;    // Plain
  std::string url;     // Image, Voice, File
  std::string base64;  // Image, Voice
  std::string target;  // At: the mentioned user's id
  std::string name;    // File: file name
  std::string id;      // Quote: the quoted message id; Source: this message's id
};

using MessageChain = std::vector<MessageElement>;

enum class TargetType { kPerson, kGroup };

struct OutgoingMessage {
  TargetType target_type = TargetType::kPerson;
  std::string target_id;
  MessageChain chain;
};

}  // namespace sb::domain
