#include "plugins/blocking_http.hpp"

#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <future>

namespace sb::plugins {

namespace asio = boost::asio;
using util::ErrorCode;

util::Result<net::HttpResponse> SendAndWait(net::HttpClient& http, asio::any_io_executor executor,
                                            net::HttpRequest request, net::BodySink sink,
                                            std::string_view service) {
  const auto limit = request.timeouts.total + std::chrono::seconds(5);
  auto future = asio::co_spawn(
      executor,
      [&http, request = std::move(request),
       sink = std::move(sink)]() mutable -> asio::awaitable<util::Result<net::HttpResponse>> {
        co_return co_await http.Send(std::move(request), std::move(sink));
      },
      asio::use_future);
  // Bounded even if the I/O context stops under us (shutdown): a task thread never hangs.
  if (future.wait_for(limit) != std::future_status::ready) {
    return util::Fail(ErrorCode::kUnavailable,
                      fmt::format("the call to {} did not end (shutting down?)", service));
  }
  try {
    return future.get();
  } catch (const std::exception& e) {
    return util::Fail(ErrorCode::kInternal,
                      fmt::format("call to {} failed: {}", service, e.what()));
  }
}

}  // namespace sb::plugins
