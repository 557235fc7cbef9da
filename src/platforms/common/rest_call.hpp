// A call to a platform's web API over net::HttpClient with the platform's rate limiting honoured:
// a 429 (or a 503 with Retry-After) is tried again after the wait the platform asked for, within
// a bounded budget, so one busy moment does not fail a send and a long ban fails fast.
//   net::HttpRequest req = JsonRequest("POST", base + "/chat.postMessage", token, body);
//   auto response = co_await SendWithRetry(*context.http, std::move(req));
//   if (response && response->status == 429) ... // the budget ran out: report rate limiting
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "net/http_client.hpp"
#include "util/error.hpp"

namespace sb::platforms::common {

struct RetryPolicy {
  int max_attempts = 3;                          // calls in all, the first included
  std::chrono::seconds max_wait{30};             // a longer Retry-After is not waited for
  std::chrono::milliseconds default_wait{1000};  // a 429 without a usable Retry-After
  // Another header giving the wait in whole seconds, read when Retry-After is absent (KOOK's
  // X-Rate-Limit-Reset), waited at least default_wait; a lower-case literal; null: none. A plain
  // pointer keeps the policy trivially destructible: with a std::string here, g++ 12 freed
  // SendWithRetry's defaulted `policy` parameter twice (line_test crashed).
  const char* wait_header = nullptr;
};

// Retry-After in whole seconds (the HTTP-date form is not used by chat platforms); nullopt when
// absent or not a small non-negative integer.
std::optional<std::chrono::seconds> RetryAfter(const net::HttpResponse& response);

// Pure: how long to wait before repeating a call that got `response` after `attempts_made`
// calls, or nullopt when it is not to be repeated (not 429 / 503-with-Retry-After, attempts used
// up, or the platform asks for more than max_wait).
std::optional<std::chrono::milliseconds> RetryDelay(const net::HttpResponse& response,
                                                    int attempts_made, const RetryPolicy& policy);

// A request with, when `json_body` is not empty, `Content-Type: application/json;
// charset=utf-8`; 10 s to connect, 30 s in all, answers up to 1 MiB. For platforms whose credential
// travels in the URL (WeChat's access_token) or in a header of their own.
net::HttpRequest JsonRequest(std::string method, std::string url, std::string json_body = {});

// A request with `Authorization: Bearer <token>` and, when `json_body` is not empty,
// `Content-Type: application/json; charset=utf-8`; 10 s to connect, 30 s in all.
net::HttpRequest BearerRequest(std::string method, std::string url, std::string_view token,
                               std::string json_body = {});

// Sends `request`, repeating it as RetryDelay says (the wait is an Asio timer, so cancelling the
// awaiting coroutine ends it). Returns the last response, which may still be a 429, or the
// transport's error.
boost::asio::awaitable<util::Result<net::HttpResponse>> SendWithRetry(net::HttpClient& http,
                                                                      net::HttpRequest request,
                                                                      RetryPolicy policy = {});

}  // namespace sb::platforms::common
