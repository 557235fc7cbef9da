// Pieces shared by the wire protocols: reading provider JSON without exceptions, message text and
// images, tool-call fragments, base64 vectors, and provider error text made safe to show.
//   auto body = ParseProviderObject(response.body);   // kUpstreamFailed when not a JSON object
//   return ProviderError(ErrorCode::kUpstreamAuth, 401, "Incorrect API key provided");
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/llm.hpp"
#include "net/http_message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::llm {

// Provider text quoted in an error message is cut to this many bytes (on a UTF-8 boundary).
inline constexpr std::size_t kMaxProviderMessageBytes = 300;

// Reading JSON: absent and wrong-kind members read as "not there", never throw.

// The member `key` of `value`, or nullptr when `value` is not an object or lacks it.
const util::Json* Member(const util::Json& value, std::string_view key);
const util::JsonObject* ObjectMember(const util::Json& value, std::string_view key);
const util::JsonArray* ArrayMember(const util::Json& value, std::string_view key);
// "" when absent, null or not a string.
std::string StringMember(const util::Json& value, std::string_view key);
// Integers in any JSON number form (5, 5.0); nullopt when absent or not integral.
std::optional<std::int64_t> IntMember(const util::Json& value, std::string_view key);

// An `error` member that is not null: some servers send "error":null beside a normal answer.
bool HasError(const util::Json& value);
// A provider body that must be a JSON object; kUpstreamFailed "malformed <what> from provider".
util::Result<util::Json> ParseProviderObject(std::string_view text,
                                             std::string_view what = "response");
util::Error MalformedResponse(std::string_view detail);

net::HttpRequest JsonPost(std::string url, std::vector<std::pair<std::string, std::string>> headers,
                          const util::JsonObject& body);
// The text parts of a message, concatenated (parts are pieces of one text, so no separator).
std::string JoinedText(const domain::ChatMessage& message);
bool HasImages(const domain::ChatMessage& message);
bool IsHttpUrl(std::string_view url);

// "data:image/png;base64,AAAA" → {"image/png", "AAAA"}; nullopt for anything else (including
// data: URLs that are not base64, which no provider accepts).
struct DataUrl {
  std::string media_type;
  std::string_view data;
};
std::optional<DataUrl> ParseBase64DataUrl(std::string_view url);

// Tool-call arguments (JSON text) as the object that Anthropic and Ollama want; "" means {}.
// kInvalidArgument when the text is not a JSON object.
util::Result<util::JsonObject> ArgumentsObject(const domain::ToolCall& call);
// JSON text in compact form, so streamed and whole answers compare equal; unparsable text is
// returned unchanged (it is the model's output, the pipeline decides what to do with it).
std::string CompactJsonText(std::string_view text);
// A tool's JSON Schema, with an empty one made a valid parameterless object schema.
util::JsonObject ToolSchema(const domain::ToolSpec& tool);

// Tool calls arriving in pieces keyed by their position in the final list.
class ToolCallFragments {
 public:
  // Creates the call at `index` if new; a non-empty id or name replaces the stored one.
  void Start(std::int64_t index, std::string_view id, std::string_view name);
  void AppendArguments(std::int64_t index, std::string_view piece);
  bool empty() const { return calls_.empty(); }
  // The calls in index order; empty arguments become "{}".
  std::vector<domain::ToolCall> Take(bool compact_arguments);

 private:
  std::map<std::int64_t, domain::ToolCall> calls_;
};

// A model that called tools but reports a plain "stop" (Ollama, some compatible servers) is
// reported as "tool_calls", so callers can rely on finish_reason alone.
void SettleFinishReason(domain::ChatResult& result);
// total_tokens when the provider left it out.
void SettleUsage(domain::Usage& usage);

// Standard base64 (padding optional); nullopt on a character outside the alphabet.
std::optional<std::string> DecodeBase64(std::string_view text);
// `Authorization: Bearer <key>` (left out when the key is empty) and a JSON content type: the
// OpenAI family and Ollama authenticate the same way.
std::vector<std::pair<std::string, std::string>> BearerJsonHeaders(const std::string& api_key);
// The inputs of an embedding request as the JSON array both OpenAI and Ollama take;
// kInvalidArgument when there is none.
util::Result<util::JsonArray> EmbeddingInputs(const domain::EmbeddingRequest& request);
// Base64 of little-endian IEEE-754 float32 values (OpenAI's encoding_format "base64").
std::optional<std::vector<float>> DecodeFloat32Base64(std::string_view text);

// Provider text cut to kMaxProviderMessageBytes, with anything shaped like an API key replaced by
// "[redacted]": some providers quote the (partly masked) key back in their 401 text.
std::string SafeProviderText(std::string_view text);
// "provider answered 401: Incorrect API key provided" (the text is made safe here).
util::Error ProviderError(util::ErrorCode code, int status, std::string_view provider_message);
// An in-band error after a 200: "provider stream error: Overloaded".
util::Error StreamError(util::ErrorCode code, std::string_view provider_message);
// The body itself when it is not JSON (a proxy's HTML page, Cloudflare's 413), trimmed.
std::string RawBodyMessage(std::string_view body);

}  // namespace sb::llm
