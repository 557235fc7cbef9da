#include "llm/gateway.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <cmath>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

namespace sb::llm {

namespace asio = boost::asio;
using util::ErrorCode;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// One call in flight: its own strand, so Cancel (from any thread) and the coroutine never touch
// the cancellation signal at the same time.
class Call final : public domain::CallHandle, public std::enable_shared_from_this<Call> {
 public:
  explicit Call(const asio::any_io_executor& executor) : strand_(asio::make_strand(executor)) {}

  void Cancel() override {
    asio::post(strand_, [self = shared_from_this()] {
      self->signal_.emit(asio::cancellation_type::terminal);
    });
  }

  asio::strand<asio::any_io_executor>& strand() { return strand_; }
  asio::cancellation_signal& signal() { return signal_; }

 private:
  asio::strand<asio::any_io_executor> strand_;
  asio::cancellation_signal signal_;
};

// What one attempt produced and whether another may follow.
template <typename T>
struct Attempt {
  util::Result<T> result = util::Fail(ErrorCode::kInternal, "no attempt made");
  bool retryable = false;
  bool rotate_key = false;  // the key was refused or rate limited: try the next one
  std::optional<net::HttpResponse> response = std::nullopt;  // the error answer, for retry-after
};

// Transport failures worth another try: the provider may be back a moment later.
bool RetryableTransport(ErrorCode code) {
  return code == ErrorCode::kUpstreamUnreachable || code == ErrorCode::kUpstreamTimeout ||
         code == ErrorCode::kUpstreamFailed;
}

std::string TrimSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

double JitterUnit() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

asio::awaitable<bool> Cancelled() {
  auto state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() != asio::cancellation_type::none;
}

util::Error FromException(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& se) {
    if (se.code() == asio::error::operation_aborted) {
      return {ErrorCode::kCancelled, "the call was cancelled"};
    }
    return {ErrorCode::kInternal, std::string("model call failed: ") + se.what()};
  } catch (const std::exception& ex) {
    return {ErrorCode::kInternal, std::string("model call failed: ") + ex.what()};
  }
}

}  // namespace

std::chrono::milliseconds RetryDelay(int attempt, const GatewayOptions& options,
                                     const net::HttpResponse* response, double jitter_unit) {
  using std::chrono::milliseconds;
  if (response) {
    // retry-after-ms first (OpenAI, Anthropic), then retry-after in seconds.
    double ms = -1;
    if (auto v = response->Header("retry-after-ms"); !v.empty()) {
      ms = std::atof(std::string(v).c_str());
    } else if (auto s = response->Header("retry-after"); !s.empty()) {
      ms = std::atof(std::string(s).c_str()) * 1000.0;
    }
    // Clamped as a double first: a huge or infinite value must not overflow the cast.
    if (ms >= 0 && std::isfinite(ms)) {
      const double capped = std::min(ms, static_cast<double>(options.backoff_max.count()));
      return milliseconds(static_cast<std::int64_t>(capped));
    }
  }
  const double exp = static_cast<double>(options.backoff_base.count()) * std::pow(2.0, attempt);
  const double capped = std::min(exp, static_cast<double>(options.backoff_max.count()));
  return milliseconds(static_cast<std::int64_t>(capped * (0.5 + 0.5 * jitter_unit)));
}

struct HttpLlmGateway::Impl {
  asio::any_io_executor executor;
  std::shared_ptr<net::HttpClient> client;
  const domain::Catalogue& requesters;
  GatewayOptions options;
  std::unique_ptr<WireProtocol> openai = MakeOpenAiProtocol();
  std::unique_ptr<WireProtocol> anthropic = MakeAnthropicProtocol();
  std::unique_ptr<WireProtocol> ollama = MakeOllamaProtocol();
  // Spreads calls over a provider's keys; a refused key moves the call to the next one.
  std::atomic<std::uint64_t> rotation{0};

  std::mutex calls_mu{};
  std::vector<std::weak_ptr<Call>> calls{};  // in flight, for CancelAll; guarded by calls_mu

  void Track(const std::shared_ptr<Call>& call) {
    std::lock_guard lock(calls_mu);
    std::erase_if(calls, [](const std::weak_ptr<Call>& w) { return w.expired(); });
    calls.push_back(call);
  }

  util::Result<const WireProtocol*> ProtocolFor(const std::string& requester) const {
    const auto* entry = requesters.Find(requester);
    if (!entry) {
      return util::Fail(ErrorCode::kInvalidArgument,
                        fmt::format("requester '{}' is not known", requester));
    }
    auto wire = entry->descriptor.find("wire");
    const std::string_view name = wire != entry->descriptor.end() && wire->value().is_string()
                                      ? std::string_view(wire->value().as_string())
                                      : std::string_view();
    if (name == "openai") return openai.get();
    if (name == "anthropic") return anthropic.get();
    if (name == "ollama") return ollama.get();
    return util::Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("requester '{}' is not supported for model calls yet", requester));
  }

  // Runs `once(key)` until it succeeds, fails for good, or the attempts are used up.
  template <typename T, typename Once>
  asio::awaitable<util::Result<T>> WithRetries(const domain::ProviderEndpoint& endpoint,
                                               Once once) {
    std::vector<std::string> keys = endpoint.api_keys;
    if (keys.empty()) keys.emplace_back();  // local servers (Ollama, LM Studio) need none
    const std::uint64_t first = rotation.fetch_add(1, std::memory_order_relaxed);
    std::size_t shift = 0;
    std::size_t keys_tried = 1;
    util::Result<T> last = util::Fail(ErrorCode::kInternal, "no attempt made");
    for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
      // A cancel that arrived between two operations reached neither: look before each try.
      // (co_await is kept out of conditions: GCC 12 miscompiles some of those forms.)
      const bool cancelled_before = co_await Cancelled();
      if (cancelled_before) co_return util::Fail(ErrorCode::kCancelled, "the call was cancelled");
      const std::string& key = keys[(first + shift) % keys.size()];
      Attempt<T> outcome = co_await once(key);
      if (outcome.result) co_return std::move(outcome.result);
      last = std::move(outcome.result);
      if (!outcome.retryable || attempt + 1 == options.max_attempts) break;
      const bool another_key = keys_tried < keys.size();
      if (outcome.rotate_key && another_key) {
        ++shift;
        ++keys_tried;
        // A refused key is not worth waiting for: go straight to the next one.
        if (last.error().code == ErrorCode::kUpstreamAuth) continue;
      } else if (last.error().code == ErrorCode::kUpstreamAuth || last.error().final) {
        break;  // the same key again would be refused again; a spent quota stays spent
      }
      asio::steady_timer pause(
          co_await asio::this_coro::executor,
          RetryDelay(attempt, options, outcome.response ? &*outcome.response : nullptr,
                     JitterUnit()));
      auto [ec] = co_await pause.async_wait(kTuple);
      const bool cancelled_during = co_await Cancelled();
      if (ec || cancelled_during) {
        co_return util::Fail(ErrorCode::kCancelled, "the call was cancelled");
      }
    }
    // Whatever a provider echoed, the message must not carry a key.
    if (!last) {
      for (const auto& key : endpoint.api_keys) {
        if (key.size() < 4) continue;
        for (auto pos = last.error().message.find(key); pos != std::string::npos;
             pos = last.error().message.find(key, pos)) {
          last.error().message.replace(pos, key.size(), "[redacted]");
        }
      }
    }
    co_return last;
  }

  // Classifies a finished exchange of one attempt.
  template <typename T>
  Attempt<T> FromExchange(const WireProtocol& protocol, util::Result<net::HttpResponse> sent,
                          bool delivered_output) {
    Attempt<T> a;
    if (!sent) {
      a.result = tl::unexpected(sent.error());
      // Once text reached the caller a retry would repeat it.
      a.retryable =
          RetryableTransport(sent.error().code) && !delivered_output && !sent.error().final;
      return a;
    }
    const int status = sent->status;
    util::Error error = protocol.ClassifyError(*sent);
    // Never another 4xx than 429: the request itself is at fault and would fail again.
    a.retryable = status == 429 || status >= 500 || error.code == ErrorCode::kUpstreamRateLimited;
    a.rotate_key =
        error.code == ErrorCode::kUpstreamAuth || error.code == ErrorCode::kUpstreamRateLimited;
    // Worth another try only with another key; WithRetries stops when none is left.
    if (error.code == ErrorCode::kUpstreamAuth || error.final) a.retryable = true;
    if (sent->Header("x-should-retry") == "false") a.retryable = false;
    a.result = tl::unexpected(std::move(error));
    a.response = std::move(*sent);
    return a;
  }

  net::HttpRequest Prepare(net::HttpRequest request) const {
    request.timeouts = options.timeouts;
    request.max_response_bytes = options.max_response_bytes;
    return request;
  }

  asio::awaitable<util::Result<domain::ChatResult>> RunChat(
      domain::ProviderEndpoint endpoint, domain::ChatRequest request,
      std::function<void(const domain::ChatDelta&)> on_delta) {
    auto protocol = ProtocolFor(endpoint.requester);
    if (!protocol) co_return tl::unexpected(protocol.error());
    const std::string base = TrimSlash(endpoint.base_url);
    // Streaming with nobody to hand pieces to is pointless: ask for the whole answer instead.
    if (!on_delta) request.stream = false;
    // The framing is the gateway's to decide: extra_args must not switch streaming on or off
    // or replace the model or the messages behind its back.
    for (const char* key : {"stream", "stream_options", "model", "messages"}) {
      request.extra_args.erase(key);
    }
    const bool stream = request.stream;
    co_return co_await WithRetries<domain::ChatResult>(
        endpoint, [&](const std::string& key) -> asio::awaitable<Attempt<domain::ChatResult>> {
          auto http = (*protocol)->BuildChat(base, key, request);
          if (!http) co_return Attempt<domain::ChatResult>{tl::unexpected(http.error())};
          if (!stream) {
            auto sent = co_await client->Send(Prepare(std::move(*http)));
            if (sent && sent->status >= 200 && sent->status < 300) {
              co_return Attempt<domain::ChatResult>{(*protocol)->ParseChat(*sent)};
            }
            co_return FromExchange<domain::ChatResult>(**protocol, std::move(sent), false);
          }
          auto parser = (*protocol)->NewChatStream();
          bool delivered = false;
          std::optional<util::Error> in_band;
          auto sent = co_await client->Send(Prepare(std::move(*http)), [&](std::string_view piece) {
            auto fed = parser->Feed(piece, [&](const domain::ChatDelta& d) {
              delivered = true;
              on_delta(d);
            });
            if (!fed) {
              in_band = fed.error();
              return false;
            }
            return true;
          });
          if (in_band) {
            Attempt<domain::ChatResult> a{tl::unexpected(*in_band)};
            a.retryable =
                !delivered && in_band->code == ErrorCode::kUpstreamRateLimited && !in_band->final;
            co_return a;
          }
          if (sent && sent->status >= 200 && sent->status < 300) {
            co_return Attempt<domain::ChatResult>{parser->Finish()};
          }
          co_return FromExchange<domain::ChatResult>(**protocol, std::move(sent), delivered);
        });
  }

  asio::awaitable<util::Result<domain::EmbeddingResult>> RunEmbed(
      domain::ProviderEndpoint endpoint, domain::EmbeddingRequest request) {
    auto protocol = ProtocolFor(endpoint.requester);
    if (!protocol) co_return tl::unexpected(protocol.error());
    const std::string base = TrimSlash(endpoint.base_url);
    co_return co_await WithRetries<domain::EmbeddingResult>(
        endpoint, [&](const std::string& key) -> asio::awaitable<Attempt<domain::EmbeddingResult>> {
          auto http = (*protocol)->BuildEmbedding(base, key, request);
          if (!http) co_return Attempt<domain::EmbeddingResult>{tl::unexpected(http.error())};
          auto sent = co_await client->Send(Prepare(std::move(*http)));
          if (sent && sent->status >= 200 && sent->status < 300) {
            co_return Attempt<domain::EmbeddingResult>{(*protocol)->ParseEmbedding(*sent)};
          }
          co_return FromExchange<domain::EmbeddingResult>(**protocol, std::move(sent), false);
        });
  }
};

HttpLlmGateway::HttpLlmGateway(asio::any_io_executor executor,
                               std::shared_ptr<net::HttpClient> client,
                               const domain::Catalogue& requesters, GatewayOptions options)
    : impl_(new Impl{std::move(executor), std::move(client), requesters, options}) {}

HttpLlmGateway::~HttpLlmGateway() = default;

std::shared_ptr<domain::CallHandle> HttpLlmGateway::Chat(
    const domain::ProviderEndpoint& endpoint, domain::ChatRequest request,
    std::function<void(const domain::ChatDelta&)> on_delta,
    std::function<void(util::Result<domain::ChatResult>)> done) {
  auto call = std::make_shared<Call>(impl_->executor);
  impl_->Track(call);
  auto self = shared_from_this();
  asio::co_spawn(
      call->strand(), impl_->RunChat(endpoint, std::move(request), std::move(on_delta)),
      asio::bind_cancellation_slot(call->signal().slot(),
                                   [self, call, done = std::move(done)](
                                       std::exception_ptr e, util::Result<domain::ChatResult> r) {
                                     if (e) r = tl::unexpected(FromException(e));
                                     done(std::move(r));
                                   }));
  return call;
}

std::shared_ptr<domain::CallHandle> HttpLlmGateway::Embed(
    const domain::ProviderEndpoint& endpoint, domain::EmbeddingRequest request,
    std::function<void(util::Result<domain::EmbeddingResult>)> done) {
  auto call = std::make_shared<Call>(impl_->executor);
  impl_->Track(call);
  auto self = shared_from_this();
  asio::co_spawn(call->strand(), impl_->RunEmbed(endpoint, std::move(request)),
                 asio::bind_cancellation_slot(
                     call->signal().slot(),
                     [self, call, done = std::move(done)](std::exception_ptr e,
                                                          util::Result<domain::EmbeddingResult> r) {
                       if (e) r = tl::unexpected(FromException(e));
                       done(std::move(r));
                     }));
  return call;
}

void HttpLlmGateway::CancelAll() {
  std::vector<std::shared_ptr<Call>> live;
  {
    std::lock_guard lock(impl_->calls_mu);
    for (auto& weak : impl_->calls) {
      if (auto call = weak.lock()) live.push_back(std::move(call));
    }
    impl_->calls.clear();
  }
  for (auto& call : live) call->Cancel();
}

}  // namespace sb::llm
