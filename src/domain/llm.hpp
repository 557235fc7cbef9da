// The port to language models: one normalized shape for chat (plain, streamed, with images and
// tool calls) and embeddings, whatever the provider's wire protocol. Implemented by llm/ (one
// wire protocol per requester family); used by services (model tests) and, later, the pipeline.
//   gateway.Chat(endpoint, request, on_delta, [](Result<ChatResult> r) { ... });
// Callbacks run on an I/O thread; keep them short and never block in them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::domain {

struct ContentPart {
  enum class Kind { kText, kImage };
  Kind kind = Kind::kText;
  std::string text;       // kText
  std::string image_url;  // kImage: http(s) URL or a data: URL ("data:image/png;base64,...")
};

// A model's request to call a tool. `arguments` is JSON text (providers that send an object have
// it serialized), so every provider looks the same to the pipeline and plugins.
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;
};

struct ChatMessage {
  std::string role;  // system | user | assistant | tool
  std::vector<ContentPart> content;
  std::vector<ToolCall> tool_calls;  // assistant messages that called tools
  std::string tool_call_id;          // tool messages: the call this answers
};

// A tool offered to the model; `parameters` is a JSON Schema object.
struct ToolSpec {
  std::string name;
  std::string description;
  util::JsonObject parameters;
};

struct Usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t total_tokens = 0;
};

// Who asked for a call, for monitoring (never sent to the provider); empty when no bot did (a
// model test, a plugin's call).
struct CallOrigin {
  std::string bot_id;
  std::string pipeline_id;
  std::string session_id;
};

struct ChatRequest {
  std::string model;  // the provider's model id (requester_config.model)
  std::vector<ChatMessage> messages;
  std::vector<ToolSpec> tools;
  util::JsonObject extra_args;  // merged into the wire request body as given
  bool stream = false;          // deliver text pieces through on_delta as they arrive
  CallOrigin origin;
};

struct ChatResult {
  std::string content;
  std::string reasoning;  // "thinking" text where the provider separates it
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;  // normalized: stop | length | tool_calls | content_filter | other
  Usage usage;
};

struct ChatDelta {
  std::string content;
};

struct EmbeddingRequest {
  std::string model;
  std::vector<std::string> inputs;
  util::JsonObject extra_args;
};

struct EmbeddingResult {
  std::vector<std::vector<float>> vectors;  // one per input, in input order
  Usage usage;
};

// Where a call goes: the provider's requester family, base URL and keys.
struct ProviderEndpoint {
  std::string requester;  // catalogue name, e.g. "openai-chat-completions"
  std::string base_url;
  std::vector<std::string> api_keys;
};

// What calling a stored LLM model needs: its provider's endpoint and the model's own settings.
struct ModelRoute {
  ProviderEndpoint endpoint;
  std::string model_id;         // requester_config.model, else the model's name
  util::JsonObject extra_args;  // requester_config.args, then extra_args
  std::vector<std::string> abilities;
};

// Looks up stored models for callers that only know a model uuid (pipelines). May block.
class ModelResolver {
 public:
  virtual ~ModelResolver() = default;
  // kNotFound for an unknown model; kInvalidArgument for a malformed uuid.
  virtual util::Result<ModelRoute> Resolve(const std::string& model_uuid) = 0;
};

// Cancels a call in flight; `done` is then called with kCancelled (if it was not called yet).
class CallHandle {
 public:
  virtual ~CallHandle() = default;
  virtual void Cancel() = 0;
};

// Thread-safe. Each call invokes `done` exactly once. Errors are classified: kUpstreamAuth (bad
// key), kUpstreamNotFound (unknown model), kUpstreamRateLimited, kUpstreamTimeout,
// kUpstreamUnreachable (refused, DNS, TLS), kUpstreamFailed (provider error, with its message),
// kInvalidArgument (unknown requester, or a request the protocol cannot express), kCancelled.
// Messages never contain an API key.
class LlmGateway {
 public:
  virtual ~LlmGateway() = default;
  virtual std::shared_ptr<CallHandle> Chat(const ProviderEndpoint& endpoint, ChatRequest request,
                                           std::function<void(const ChatDelta&)> on_delta,
                                           std::function<void(util::Result<ChatResult>)> done) = 0;
  virtual std::shared_ptr<CallHandle> Embed(
      const ProviderEndpoint& endpoint, EmbeddingRequest request,
      std::function<void(util::Result<EmbeddingResult>)> done) = 0;
};

}  // namespace sb::domain
