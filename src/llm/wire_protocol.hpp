// One model-provider wire protocol (OpenAI chat completions, Anthropic messages, Ollama native):
// how a normalized request becomes an HTTP request and how the HTTP answer becomes a normalized
// result. No I/O here (the gateway sends), so each protocol is tested with recorded payloads.
//   auto http = protocol.BuildChat(base_url, key, request);
//   auto result = protocol.ParseChat(response);            // 2xx body
//   auto error = protocol.ClassifyError(response);         // non-2xx
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "domain/llm.hpp"
#include "net/http_message.hpp"
#include "util/error.hpp"

namespace sb::llm {

// Incremental parse of one streamed chat body (SSE or NDJSON, per protocol).
class ChatStream {
 public:
  virtual ~ChatStream() = default;
  // Feeds body bytes in any split; calls `on_delta` for each text piece as soon as it is
  // complete. Fails with kUpstreamFailed (provider's message) on an in-band error event, or
  // kUpstreamRateLimited for an in-band overload/rate error.
  virtual util::Result<void> Feed(
      std::string_view piece, const std::function<void(const domain::ChatDelta&)>& on_delta) = 0;
  // At end of body: the whole result (content joined, tool calls assembled from fragments,
  // usage, finish_reason). kUpstreamFailed when the stream ended before its terminator.
  virtual util::Result<domain::ChatResult> Finish() = 0;
};

// Stateless and thread-safe.
class WireProtocol {
 public:
  virtual ~WireProtocol() = default;

  // kInvalidArgument when the request cannot be expressed (e.g. a message role the protocol
  // lacks). `base_url` has no trailing slash. `extra_args` keys are merged into the body last.
  virtual util::Result<net::HttpRequest> BuildChat(const std::string& base_url,
                                                   const std::string& api_key,
                                                   const domain::ChatRequest& request) const = 0;
  // A 2xx non-streamed body. kUpstreamFailed for a malformed or truncated body.
  virtual util::Result<domain::ChatResult> ParseChat(const net::HttpResponse& response) const = 0;
  virtual std::unique_ptr<ChatStream> NewChatStream() const = 0;

  virtual util::Result<net::HttpRequest> BuildEmbedding(
      const std::string& base_url, const std::string& api_key,
      const domain::EmbeddingRequest& request) const = 0;
  virtual util::Result<domain::EmbeddingResult> ParseEmbedding(
      const net::HttpResponse& response) const = 0;

  // A non-2xx answer as an error: kUpstreamAuth (401/403, bad key), kUpstreamNotFound (unknown
  // model), kUpstreamRateLimited (429, quota, overloaded), kUpstreamFailed (anything else), with
  // the provider's own message (truncated to 300 bytes) and the status. Never contains the key.
  virtual util::Error ClassifyError(const net::HttpResponse& response) const = 0;
};

std::unique_ptr<WireProtocol> MakeOpenAiProtocol();
std::unique_ptr<WireProtocol> MakeAnthropicProtocol();
std::unique_ptr<WireProtocol> MakeOllamaProtocol();

}  // namespace sb::llm
