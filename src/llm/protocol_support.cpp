#include "llm/protocol_support.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "util/crypto.hpp"

namespace sb::llm {

using util::ErrorCode;
using util::Json;
using util::JsonArray;
using util::JsonObject;

const Json* Member(const Json& value, std::string_view key) {
  const auto* object = value.if_object();
  if (object == nullptr) return nullptr;
  return object->if_contains(key);
}

const JsonObject* ObjectMember(const Json& value, std::string_view key) {
  const Json* member = Member(value, key);
  return member == nullptr ? nullptr : member->if_object();
}

const JsonArray* ArrayMember(const Json& value, std::string_view key) {
  const Json* member = Member(value, key);
  return member == nullptr ? nullptr : member->if_array();
}

std::string StringMember(const Json& value, std::string_view key) {
  const Json* member = Member(value, key);
  if (member == nullptr || !member->is_string()) return {};
  return std::string(member->get_string());
}

std::optional<std::int64_t> IntMember(const Json& value, std::string_view key) {
  const Json* member = Member(value, key);
  if (member == nullptr) return std::nullopt;
  if (member->is_int64()) return member->get_int64();
  if (member->is_uint64()) return static_cast<std::int64_t>(member->get_uint64());
  if (member->is_double()) {
    const double d = member->get_double();
    // Some servers write counts as 12.0; anything fractional or huge is not a count.
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9e15) {
      return static_cast<std::int64_t>(d);
    }
  }
  return std::nullopt;
}

bool HasError(const Json& value) {
  const Json* error = Member(value, "error");
  return error != nullptr && !error->is_null();
}

util::Error MalformedResponse(std::string_view detail) {
  return util::Error{ErrorCode::kUpstreamFailed,
                     fmt::format("malformed response from provider: {}", detail)};
}

util::Result<Json> ParseProviderObject(std::string_view text, std::string_view what) {
  auto parsed = util::ParseJson(text);
  if (!parsed) {
    return tl::unexpected(
        util::Error{ErrorCode::kUpstreamFailed,
                    fmt::format("malformed {} from provider: {}", what, parsed.error().message)});
  }
  if (!parsed->is_object()) {
    return tl::unexpected(
        util::Error{ErrorCode::kUpstreamFailed,
                    fmt::format("malformed {} from provider: expected a JSON object, got {}", what,
                                util::JsonKindName(*parsed))});
  }
  return parsed;
}

net::HttpRequest JsonPost(std::string url, std::vector<std::pair<std::string, std::string>> headers,
                          const JsonObject& body) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = std::move(url);
  request.headers = std::move(headers);
  request.body = util::SerializeJson(body);
  return request;
}

std::string JoinedText(const domain::ChatMessage& message) {
  std::string text;
  for (const auto& part : message.content) {
    if (part.kind == domain::ContentPart::Kind::kText) text += part.text;
  }
  return text;
}

bool HasImages(const domain::ChatMessage& message) {
  for (const auto& part : message.content) {
    if (part.kind == domain::ContentPart::Kind::kImage) return true;
  }
  return false;
}

namespace {

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

}  // namespace

bool IsHttpUrl(std::string_view url) {
  return StartsWithNoCase(url, "http://") || StartsWithNoCase(url, "https://");
}

std::optional<DataUrl> ParseBase64DataUrl(std::string_view url) {
  if (!StartsWithNoCase(url, "data:")) return std::nullopt;
  const auto comma = url.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  std::string_view meta = url.substr(5, comma - 5);
  constexpr std::string_view kBase64 = ";base64";
  if (meta.size() < kBase64.size() ||
      !StartsWithNoCase(meta.substr(meta.size() - kBase64.size()), kBase64)) {
    return std::nullopt;
  }
  meta.remove_suffix(kBase64.size());
  // Parameters such as ";charset=..." are not part of the media type.
  meta = meta.substr(0, meta.find(';'));
  return DataUrl{std::string(meta), url.substr(comma + 1)};
}

util::Result<JsonObject> ArgumentsObject(const domain::ToolCall& call) {
  if (call.arguments.find_first_not_of(" \t\r\n") == std::string::npos) return JsonObject{};
  auto parsed = util::ParseJson(call.arguments);
  if (!parsed || !parsed->is_object()) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("arguments of tool call '{}' are not a JSON object", call.name));
  }
  return std::move(parsed->as_object());
}

std::string CompactJsonText(std::string_view text) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return std::string(text);
  return util::SerializeJson(*parsed);
}

JsonObject ToolSchema(const domain::ToolSpec& tool) {
  if (!tool.parameters.empty()) return tool.parameters;
  return JsonObject{{"type", "object"}, {"properties", JsonObject{}}};
}

void ToolCallFragments::Start(std::int64_t index, std::string_view id, std::string_view name) {
  auto& call = calls_[index];
  if (!id.empty()) call.id = std::string(id);
  if (!name.empty()) call.name = std::string(name);
}

void ToolCallFragments::AppendArguments(std::int64_t index, std::string_view piece) {
  calls_[index].arguments += piece;
}

std::vector<domain::ToolCall> ToolCallFragments::Take(bool compact_arguments) {
  std::vector<domain::ToolCall> calls;
  calls.reserve(calls_.size());
  for (auto& [index, call] : calls_) {
    if (call.arguments.find_first_not_of(" \t\r\n") == std::string::npos) {
      call.arguments = "{}";
    } else if (compact_arguments) {
      call.arguments = CompactJsonText(call.arguments);
    }
    calls.push_back(std::move(call));
  }
  calls_.clear();
  return calls;
}

void SettleFinishReason(domain::ChatResult& result) {
  if (!result.tool_calls.empty() && result.finish_reason == "stop") {
    result.finish_reason = "tool_calls";
  }
  if (result.finish_reason.empty()) result.finish_reason = "other";
}

void SettleUsage(domain::Usage& usage) {
  if (usage.total_tokens == 0) usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
}

std::optional<std::string> DecodeBase64(std::string_view text) {
  std::string out;
  if (!util::Base64Decode(text, out)) return std::nullopt;
  return out;
}

util::Result<util::JsonArray> EmbeddingInputs(const domain::EmbeddingRequest& request) {
  if (request.inputs.empty()) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "an embedding request needs an input");
  }
  util::JsonArray inputs;
  inputs.reserve(request.inputs.size());
  for (const auto& input : request.inputs) inputs.emplace_back(input);
  return inputs;
}

std::vector<std::pair<std::string, std::string>> BearerJsonHeaders(const std::string& api_key) {
  std::vector<std::pair<std::string, std::string>> headers;
  // Local servers (Ollama, LM Studio, vLLM) run without a key, and an empty Bearer would be
  // refused by some of them.
  if (!api_key.empty()) headers.emplace_back("Authorization", "Bearer " + api_key);
  headers.emplace_back("Content-Type", "application/json");
  return headers;
}

std::optional<std::vector<float>> DecodeFloat32Base64(std::string_view text) {
  auto bytes = DecodeBase64(text);
  if (!bytes || bytes->size() % 4 != 0) return std::nullopt;
  std::vector<float> values(bytes->size() / 4);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::array<unsigned char, 4> raw;
    std::memcpy(raw.data(), bytes->data() + i * 4, 4);
    const std::uint32_t word =
        static_cast<std::uint32_t>(raw[0]) | static_cast<std::uint32_t>(raw[1]) << 8 |
        static_cast<std::uint32_t>(raw[2]) << 16 | static_cast<std::uint32_t>(raw[3]) << 24;
    values[i] = std::bit_cast<float>(word);
  }
  return values;
}

namespace {

bool IsTokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '*' || c == '.';
}

// Prefixes of the API keys of the providers Switchboard talks to (OpenAI and most compatible
// services "sk-", Anthropic "sk-ant-", Google "AIza", Groq "gsk_", xAI, Perplexity, Hugging Face,
// Replicate, NVIDIA). A masked key ("sk-abc***xyz") is still redacted: it identifies the key.
bool LooksLikeKey(std::string_view token) {
  static constexpr std::array<std::string_view, 9> kPrefixes = {
      "sk-", "sk_", "AIza", "gsk_", "xai-", "pplx-", "hf_", "r8_", "nvapi-"};
  if (token.size() >= 12) {
    for (auto prefix : kPrefixes) {
      if (token.substr(0, prefix.size()) == prefix) return true;
    }
  }
  // Long random-looking runs of letters and digits are keys or tokens more often than words.
  if (token.size() >= 32) {
    bool letters = false;
    bool digits = false;
    for (char c : token) {
      if (c >= '0' && c <= '9') digits = true;
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) letters = true;
    }
    return letters && digits;
  }
  return false;
}

// Cuts at `max` bytes without splitting a UTF-8 sequence.
std::string_view TruncateUtf8(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace

std::string SafeProviderText(std::string_view text) {
  std::string scrubbed;
  scrubbed.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (!IsTokenChar(text[i])) {
      const char c = text[i++];
      // Control characters would let a provider forge log lines.
      scrubbed.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && IsTokenChar(text[end])) ++end;
    // A sentence's full stop after a key is not part of it.
    while (end > i + 1 && text[end - 1] == '.') --end;
    const std::string_view token = text.substr(i, end - i);
    scrubbed += LooksLikeKey(token) ? std::string_view("[redacted]") : token;
    i = end;
  }
  const auto first = scrubbed.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  const auto last = scrubbed.find_last_not_of(' ');
  std::string_view trimmed(scrubbed.data() + first, last - first + 1);
  return std::string(TruncateUtf8(trimmed, kMaxProviderMessageBytes));
}

util::Error ProviderError(ErrorCode code, int status, std::string_view provider_message) {
  std::string text = SafeProviderText(provider_message);
  if (text.empty()) text = "no error message";
  return util::Error{code, fmt::format("provider answered {}: {}", status, text)};
}

util::Error StreamError(ErrorCode code, std::string_view provider_message) {
  std::string text = SafeProviderText(provider_message);
  if (text.empty()) text = "no error message";
  return util::Error{code, fmt::format("provider stream error: {}", text)};
}

std::string RawBodyMessage(std::string_view body) {
  const auto first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = body.find_last_not_of(" \t\r\n");
  return std::string(body.substr(first, last - first + 1));
}

}  // namespace sb::llm
