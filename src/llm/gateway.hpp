// The LlmGateway over HTTP: picks the wire protocol of the provider's requester family (from
// the catalogue's `wire` field), sends through net::HttpClient, and adds what every call needs:
// bounded retries with backoff and jitter on connection errors, 429 and 5xx (never other 4xx),
// rotation across the provider's keys when one is refused or rate limited, and cancellation.
//   auto gateway = std::make_shared<HttpLlmGateway>(executor, client, requesters, {});
//   gateway->Chat(endpoint, request, on_delta, done);
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "domain/catalogue.hpp"
#include "domain/llm.hpp"
#include "llm/wire_protocol.hpp"
#include "net/http_client.hpp"

namespace sb::llm {

struct GatewayOptions {
  int max_attempts = 3;  // the first try and two retries, as the official SDKs do
  std::chrono::milliseconds backoff_base{500};
  std::chrono::milliseconds backoff_max{8'000};  // also caps a provider's retry-after
  net::HttpTimeouts timeouts;
  std::size_t max_response_bytes = 16 * 1024 * 1024;
};

class HttpLlmGateway final : public domain::LlmGateway,
                             public std::enable_shared_from_this<HttpLlmGateway> {
 public:
  // `requesters` must outlive the gateway.
  HttpLlmGateway(boost::asio::any_io_executor executor, std::shared_ptr<net::HttpClient> client,
                 const domain::Catalogue& requesters, GatewayOptions options);
  ~HttpLlmGateway() override;

  std::shared_ptr<domain::CallHandle> Chat(
      const domain::ProviderEndpoint& endpoint, domain::ChatRequest request,
      std::function<void(const domain::ChatDelta&)> on_delta,
      std::function<void(util::Result<domain::ChatResult>)> done) override;
  std::shared_ptr<domain::CallHandle> Embed(
      const domain::ProviderEndpoint& endpoint, domain::EmbeddingRequest request,
      std::function<void(util::Result<domain::EmbeddingResult>)> done) override;

  // Cancels every call in flight (shutdown): each `done` then runs with kCancelled.
  void CancelAll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The delay before retry `attempt` (0-based): exponential from `base`, capped, with jitter in
// [50 %, 100 %]; a provider's retry-after (seconds or milliseconds header) wins, capped too.
std::chrono::milliseconds RetryDelay(int attempt, const GatewayOptions& options,
                                     const net::HttpResponse* response, double jitter_unit);

}  // namespace sb::llm
