#include "app/call_forwarder.hpp"

#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/signatures.hpp"

namespace sb::app {

namespace {

namespace asio = boost::asio;

// The owner's answer may be as large as a platform expects (a page for a web bot), not more.
constexpr std::size_t kMaxAnswerBytes = 1024 * 1024;

// Hop-by-hop and framing headers are the HTTP client's business, not the call's.
bool Forwardable(std::string_view name) {
  return name != "host" && name != "content-length" && name != "connection" &&
         name != "transfer-encoding" && name != "keep-alive" && name != "upgrade" && name != "te" &&
         name != "trailer" && name != kForwardedByHeader;
}

util::Error Unreachable(const domain::BotLease& holder, std::string_view why) {
  util::Error e{util::ErrorCode::kUnavailable,
                fmt::format("bot {} is run by instance {}, which could not be reached: {}",
                            holder.bot.str(), holder.owner, why)};
  e.retry_after_seconds = 1;
  return e;
}

}  // namespace

CallForwarder MakeCallForwarder(asio::any_io_executor executor,
                                std::shared_ptr<net::HttpClient> http, std::string instance_id) {
  return [executor, http = std::move(http), instance_id = std::move(instance_id)](
             const domain::BotLease& holder, domain::PlatformCall call,
             std::function<void(util::Result<domain::PlatformAnswer>)> answer) {
    net::HttpRequest request;
    request.method = call.method;
    std::string base = holder.owner_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    request.url = base + "/bots/" + holder.bot.str() + call.path;
    for (std::size_t i = 0; i < call.query.size(); ++i) {
      request.url += i == 0 ? '?' : '&';
      request.url += platforms::common::QueryEscape(call.query[i].first) + "=" +
                     platforms::common::QueryEscape(call.query[i].second);
    }
    for (auto& [name, value] : call.headers) {
      if (Forwardable(name)) request.headers.emplace_back(name, value);
    }
    request.headers.emplace_back(kForwardedByHeader, instance_id);
    request.headers.emplace_back("x-forwarded-for", call.remote_address);
    request.body = std::move(call.body);
    request.timeouts.connect = std::chrono::seconds(3);
    request.timeouts.total = std::chrono::seconds(10);
    request.timeouts.idle = std::chrono::seconds(10);
    request.max_response_bytes = kMaxAnswerBytes;
    asio::co_spawn(
        executor,
        [http, holder, request = std::move(request),
         answer = std::move(answer)]() mutable -> asio::awaitable<void> {
          auto response = co_await http->Send(std::move(request));
          if (!response) {
            answer(tl::make_unexpected(Unreachable(holder, response.error().message)));
            co_return;
          }
          domain::PlatformAnswer a;
          a.status = response->status;
          a.content_type = std::string(response->Header("content-type"));
          a.body = std::move(response->body);
          for (auto& [name, value] : response->headers) {
            if (name != "content-type" && name != "x-request-id" && Forwardable(name) &&
                name != "date" && name != "server") {
              a.headers.emplace_back(std::move(name), std::move(value));
            }
          }
          answer(std::move(a));
        },
        asio::detached);
  };
}

}  // namespace sb::app
