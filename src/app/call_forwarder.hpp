// Several instances behind one load balancer: a platform's webhook call for a bot that another
// instance runs is handed to that instance over HTTP (at the URL its lease advertises) and the
// owner's answer goes back to the platform, so any instance accepts any bot's webhook traffic.
// The owner checks the platform's signature as always; a forwarded call is never forwarded again.
//   ownership.forward = MakeCallForwarder(io.get_executor(), http_client, core.instance_id());
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <string>

#include "domain/bot_lease.hpp"
#include "domain/platform_call.hpp"
#include "util/error.hpp"

namespace sb::net {
class HttpClient;
}

namespace sb::app {

// The header naming the instance that forwarded a call (its presence stops a second hop).
inline constexpr const char* kForwardedByHeader = "x-switchboard-forwarded-by";

using CallForwarder =
    std::function<void(const domain::BotLease& holder, domain::PlatformCall call,
                       std::function<void(util::Result<domain::PlatformAnswer>)>)>;

// `answer` runs once, on an I/O thread: the owner's answer, or kUnavailable (retry after 1 s)
// when the owner cannot be reached in 10 s.
CallForwarder MakeCallForwarder(boost::asio::any_io_executor executor,
                                std::shared_ptr<net::HttpClient> http, std::string instance_id);

}  // namespace sb::app
