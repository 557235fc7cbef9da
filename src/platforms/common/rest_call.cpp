#include "platforms/common/rest_call.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>

namespace sb::platforms::common {

namespace asio = boost::asio;

namespace {

// A header holding a small non-negative whole number of seconds.
std::optional<std::chrono::seconds> SecondsHeader(const net::HttpResponse& response,
                                                  std::string_view name) {
  std::string_view text = response.Header(name);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty() || text.size() > 9) return std::nullopt;
  long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return std::chrono::seconds(value);
}

}  // namespace

std::optional<std::chrono::seconds> RetryAfter(const net::HttpResponse& response) {
  return SecondsHeader(response, "retry-after");
}

std::optional<std::chrono::milliseconds> RetryDelay(const net::HttpResponse& response,
                                                    int attempts_made, const RetryPolicy& policy) {
  if (attempts_made >= policy.max_attempts) return std::nullopt;
  const auto after = RetryAfter(response);
  if (response.status == 503 && !after) return std::nullopt;
  if (response.status != 429 && response.status != 503) return std::nullopt;
  if (!after && policy.wait_header != nullptr) {
    if (auto wait = SecondsHeader(response, policy.wait_header)) {
      if (*wait > policy.max_wait) return std::nullopt;
      return std::max<std::chrono::milliseconds>(*wait, policy.default_wait);
    }
  }
  if (!after) return policy.default_wait;
  if (*after > policy.max_wait) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(*after);
}

net::HttpRequest JsonRequest(std::string method, std::string url, std::string json_body) {
  net::HttpRequest request;
  request.method = std::move(method);
  request.url = std::move(url);
  if (!json_body.empty()) {
    request.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
  }
  request.body = std::move(json_body);
  request.timeouts.connect = std::chrono::seconds(10);
  request.timeouts.total = std::chrono::seconds(30);
  request.timeouts.idle = std::chrono::seconds(30);
  request.max_response_bytes = 1024 * 1024;
  return request;
}

net::HttpRequest BearerRequest(std::string method, std::string url, std::string_view token,
                               std::string json_body) {
  net::HttpRequest request = JsonRequest(std::move(method), std::move(url), std::move(json_body));
  request.headers.insert(request.headers.begin(),
                         {"Authorization", "Bearer " + std::string(token)});
  return request;
}

asio::awaitable<util::Result<net::HttpResponse>> SendWithRetry(net::HttpClient& http,
                                                               net::HttpRequest request,
                                                               RetryPolicy policy) {
  for (int attempt = 1;; ++attempt) {
    auto response = co_await http.Send(request);
    if (!response) co_return response;
    const auto delay = RetryDelay(*response, attempt, policy);
    if (!delay) co_return response;
    asio::steady_timer timer(co_await asio::this_coro::executor, *delay);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    auto state = co_await asio::this_coro::cancellation_state;
    if (ec || state.cancelled() != asio::cancellation_type::none) {
      co_return util::Fail(util::ErrorCode::kCancelled, "cancelled while waiting out a rate limit");
    }
  }
}

}  // namespace sb::platforms::common
