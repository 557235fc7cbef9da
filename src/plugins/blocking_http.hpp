// One outbound HTTP call run on the I/O context and waited for: the plugin manager's clients
// (marketplace, GitHub) are called from background tasks and handlers on the blocking pool.
//   auto res = SendAndWait(http, executor, std::move(request), nullptr, "the marketplace");
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <string_view>

#include "net/http_client.hpp"
#include "util/error.hpp"

namespace sb::plugins {

// The client's own errors, or kUnavailable when the call did not end within the request's total
// timeout and 5 s more (the I/O context stopped under it: shutdown). Never call it on an I/O
// thread of `executor`. `service` names the other side in messages.
util::Result<net::HttpResponse> SendAndWait(net::HttpClient& http,
                                            boost::asio::any_io_executor executor,
                                            net::HttpRequest request, net::BodySink sink,
                                            std::string_view service);

}  // namespace sb::plugins
