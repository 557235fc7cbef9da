// The message model shared by every adapter: a chain of elements. Conversion to and from a
// platform's own format happens only inside that platform's adapter.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sb::domain {

enum class ElementType { kPlain, kImage, kAt, kAtAll, kVoice, kQuote, kFile, kSource };

// "Plain", "Image", ... (LangBot's names). Parse returns false for an unknown name.
const char* ElementTypeName(ElementType type);
bool ParseElementType(std::string_view name, ElementType& out);

struct MessageElement {
  ElementType type = ElementType::kPlain;
  // Plain: the text. Quote (received): the quoted message's text when the platform gave it or
  // the adapter fetched it, at most kMaxQuotedTextBytes (MakeQuote cuts it); empty when unknown.
  std::string text;
  std::string url;     // Image, Voice, File
  std::string base64;  // Image, Voice
  std::string target;  // At: the mentioned user's id; Quote: the quoted message's sender, if known
  std::string name;    // File: file name
  std::string id;      // Quote: the quoted message id; Source: this message's id
};

// Bound on the quoted text a received Quote carries: enough for the model to see what is
// answered, small enough that a quoted essay does not crowd out the user's own words.
inline constexpr std::size_t kMaxQuotedTextBytes = 2000;

using MessageChain = std::vector<MessageElement>;

enum class TargetType { kPerson, kGroup };

// How a reply is to be shown. kForward (output.long-text-processing.strategy "forward"): as one
// forward (merged, "chat history") message where the platform has them; an adapter without them
// sends it as kNormal, split at its per-message limit.
enum class ReplyForm { kNormal, kForward };

struct OutgoingMessage {
  TargetType target_type = TargetType::kPerson;
  std::string target_id;
  MessageChain chain;
  ReplyForm form = ReplyForm::kNormal;
};

}  // namespace sb::domain
