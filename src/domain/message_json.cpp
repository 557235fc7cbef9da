#include "domain/message_json.hpp"

#include <string>

#include "domain/message_text.hpp"

namespace sb::domain {

namespace {

using util::ErrorCode;
using util::Json;
using util::JsonObject;

tl::unexpected<util::Error> Invalid(std::string message) {
  return util::Fail(ErrorCode::kInvalidArgument, std::move(message));
}

// Reads the string member `key` of `obj` into `out`. Absent is fine unless `required`; a present
// member of another JSON type, an empty required one, or one over `max_bytes` is an error naming
// `where` + key.
util::Result<bool> ReadString(const JsonObject& obj, std::string_view key, const std::string& where,
                              bool required, std::size_t max_bytes, std::string& out) {
  const std::string field = where + std::string(key);
  const Json* value = obj.if_contains(key);
  if (value == nullptr || value->is_null()) {
    if (required) return Invalid(field + " is required");
    return false;
  }
  if (!value->is_string()) {
    return Invalid(field + " must be a string, not " + util::JsonKindName(*value));
  }
  const auto& s = value->get_string();
  if (required && s.empty()) return Invalid(field + " must not be empty");
  if (s.size() > max_bytes) {
    return Invalid(field + " must be at most " + std::to_string(max_bytes) + " bytes");
  }
  out.assign(s.data(), s.size());
  return true;
}

// A Quote's optional `origin` (LangBot's: the quoted message's chain): its Plain texts become the
// Quote's text, cut to kMaxQuotedTextBytes; other elements are left out.
util::Result<bool> ReadQuotedOrigin(const JsonObject& obj, const std::string& prefix,
                                    const ChainBounds& bounds, MessageElement& quote) {
  const Json* origin = obj.if_contains("origin");
  if (origin == nullptr || origin->is_null()) return false;
  if (!origin->is_array()) {
    return Invalid(prefix + "origin must be an array, not " + util::JsonKindName(*origin));
  }
  if (origin->get_array().size() > bounds.max_elements) {
    return Invalid(prefix + "origin must hold at most " + std::to_string(bounds.max_elements) +
                   " elements");
  }
  std::string text;
  for (const Json& element : origin->get_array()) {
    const JsonObject* o = element.if_object();
    if (o == nullptr) return Invalid(prefix + "origin holds a value that is not an object");
    const Json* type = o->if_contains("type");
    const Json* plain = o->if_contains("text");
    if (type == nullptr || !type->is_string() || type->get_string() != "Plain") continue;
    if (plain == nullptr || !plain->is_string()) continue;
    if (text.size() <= kMaxQuotedTextBytes) text.append(plain->get_string());
  }
  quote.text = MakeQuote({}, std::move(text)).text;
  return true;
}

util::Result<MessageElement> DecodeElement(const Json& value, const std::string& where,
                                           const ChainBounds& bounds) {
  if (!value.is_object()) {
    return Invalid(where + " must be an object, not " + util::JsonKindName(value));
  }
  const JsonObject& obj = value.get_object();
  const std::string prefix = where + ".";
  MessageElement e;
  std::string type;
  if (auto r = ReadString(obj, "type", prefix, true, 256, type); !r) {
    return tl::unexpected(r.error());
  }
  // Source is never on the wire: a message's own id travels beside the chain.
  if (!ParseElementType(type, e.type) || e.type == ElementType::kSource) {
    return Invalid(prefix + "type '" + type.substr(0, 32) +
                   "' is not one of Plain, Image, At, AtAll, Voice, Quote, File");
  }
  constexpr std::size_t kBase64 = std::numeric_limits<std::size_t>::max();
  util::Result<bool> r = true;
  switch (e.type) {
    case ElementType::kPlain:
      r = ReadString(obj, "text", prefix, false, bounds.max_text_bytes, e.text);
      if (r && !*r) return Invalid(prefix + "text is required for Plain");
      break;
    case ElementType::kImage:
    case ElementType::kVoice:
      r = ReadString(obj, "url", prefix, false, bounds.max_url_bytes, e.url);
      if (r) r = ReadString(obj, "base64", prefix, false, kBase64, e.base64);
      if (r && e.url.empty() && e.base64.empty()) {
        return Invalid(where + " (" + type + ") needs url or base64");
      }
      break;
    case ElementType::kAt:
      r = ReadString(obj, "target", prefix, true, bounds.max_id_bytes, e.target);
      break;
    case ElementType::kQuote:
      r = ReadString(obj, "id", prefix, true, bounds.max_id_bytes, e.id);
      if (r) r = ReadString(obj, "sender_id", prefix, false, bounds.max_id_bytes, e.target);
      if (r) r = ReadQuotedOrigin(obj, prefix, bounds, e);
      break;
    case ElementType::kFile:
      r = ReadString(obj, "url", prefix, true, bounds.max_url_bytes, e.url);
      if (r) r = ReadString(obj, "name", prefix, false, bounds.max_name_bytes, e.name);
      break;
    case ElementType::kAtAll:
    case ElementType::kSource:
      break;
  }
  if (!r) return tl::unexpected(r.error());
  return e;
}

}  // namespace

util::Result<MessageChain> DecodeMessageChain(const JsonObject& root, std::string_view key,
                                              const ChainBounds& bounds) {
  const std::string name(key);
  const Json* value = root.if_contains(key);
  if (value == nullptr) return Invalid(name + " is required");
  if (!value->is_array()) {
    return Invalid(name + " must be an array, not " + util::JsonKindName(*value));
  }
  const auto& array = value->get_array();
  if (array.empty()) return Invalid(name + " must hold at least one element");
  if (array.size() > bounds.max_elements) {
    return Invalid(name + " must hold at most " + std::to_string(bounds.max_elements) +
                   " elements");
  }
  MessageChain chain;
  chain.reserve(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) {
    auto e = DecodeElement(array[i], name + "[" + std::to_string(i) + "]", bounds);
    if (!e) return tl::unexpected(e.error());
    chain.push_back(std::move(*e));
  }
  return chain;
}

Json EncodeMessageElement(const MessageElement& e) {
  JsonObject out;
  out["type"] = ElementTypeName(e.type);
  auto put = [&out](std::string_view key, const std::string& value) {
    if (!value.empty()) out[key] = value;
  };
  switch (e.type) {
    case ElementType::kPlain:
      // Always present, even empty: the decoder requires it for Plain.
      out["text"] = e.text;
      break;
    case ElementType::kImage:
    case ElementType::kVoice:
      put("url", e.url);
      put("base64", e.base64);
      break;
    case ElementType::kAt:
      put("target", e.target);
      break;
    case ElementType::kQuote:
      put("id", e.id);
      put("sender_id", e.target);
      // LangBot's Quote carries the quoted chain as `origin`; ours keeps only its text.
      if (!e.text.empty()) {
        out["origin"] = util::JsonArray{JsonObject{{"type", "Plain"}, {"text", e.text}}};
      }
      break;
    case ElementType::kSource:
      put("id", e.id);
      break;
    case ElementType::kFile:
      put("url", e.url);
      put("name", e.name);
      break;
    case ElementType::kAtAll:
      break;
  }
  return out;
}

util::JsonArray EncodeMessageChain(const MessageChain& chain) {
  util::JsonArray out;
  for (const auto& e : chain) {
    if (e.type != ElementType::kSource) out.push_back(EncodeMessageElement(e));
  }
  return out;
}

}  // namespace sb::domain
