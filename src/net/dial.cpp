#include "net/dial.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <memory>

namespace sb::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kMaxProxyAnswer = 16 * 1024;

}  // namespace

asio::awaitable<error_code> Dial(beast::tcp_stream& stream, const std::string& host,
                                 const std::string& port,
                                 std::chrono::steady_clock::time_point deadline) {
  // The lookup runs detached and this coroutine waits on a timer that the lookup cancels when it
  // finishes. Both run on the stream's executor (a strand), so the lookup cannot finish before
  // the wait has started.
  struct Lookup {
    explicit Lookup(const asio::any_io_executor& ex) : resolver(ex), timer(ex) {}
    tcp::resolver resolver;
    asio::steady_timer timer;
    error_code ec;
    tcp::resolver::results_type results;
    bool done = false;
  };
  auto lookup = std::make_shared<Lookup>(stream.get_executor());
  lookup->timer.expires_at(deadline);
  lookup->resolver.async_resolve(
      host, port, [lookup](const error_code& ec, tcp::resolver::results_type results) {
        lookup->ec = ec;
        lookup->results = std::move(results);
        lookup->done = true;
        lookup->timer.cancel();
      });
  co_await lookup->timer.async_wait(kTuple);
  if (!lookup->done) {
    lookup->resolver.cancel();
    co_return beast::error::timeout;
  }
  if (lookup->ec) co_return lookup->ec;

  stream.expires_at(deadline);
  auto [ec, endpoint] = co_await stream.async_connect(lookup->results, kTuple);
  if (ec) co_return ec;
  error_code ignored;
  stream.socket().set_option(tcp::no_delay(true), ignored);
  co_return error_code{};
}

asio::awaitable<error_code> OpenTunnel(beast::tcp_stream& stream, const std::string& authority,
                                       const ProxyConfig& proxy, const std::string& user_agent,
                                       std::chrono::steady_clock::time_point deadline,
                                       int& refused_status) {
  std::string request = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority +
                        "\r\nUser-Agent: " + user_agent + "\r\n";
  if (!proxy.authorization.empty()) {
    request += "Proxy-Authorization: " + proxy.authorization + "\r\n";
  }
  request += "\r\n";
  stream.expires_at(deadline);
  auto [wec, wn] = co_await asio::async_write(stream, asio::buffer(request), kTuple);
  if (wec) co_return wec;

  std::string answer;
  stream.expires_at(deadline);
  auto [rec, header_end] = co_await asio::async_read_until(
      stream, asio::dynamic_buffer(answer, kMaxProxyAnswer), "\r\n\r\n", kTuple);
  if (rec) co_return rec;
  // "HTTP/1.1 200 Connection established"
  int status = 0;
  if (answer.size() >= 12 && answer.compare(0, 5, "HTTP/") == 0) {
    const auto space = answer.find(' ');
    if (space != std::string::npos && space + 4 <= answer.size()) {
      for (std::size_t i = space + 1; i < space + 4; ++i) {
        const char c = answer[i];
        status = (c >= '0' && c <= '9') ? status * 10 + (c - '0') : -1000;
      }
    }
  }
  if (status < 100) co_return asio::error::make_error_code(asio::error::invalid_argument);
  if (status / 100 != 2) {
    refused_status = status;
    co_return asio::error::make_error_code(asio::error::connection_refused);
  }
  // A 2xx answer to CONNECT has no body; the tunnel's first bytes come from the origin only
  // after we speak, so anything more is a broken proxy.
  if (answer.size() != header_end) {
    co_return asio::error::make_error_code(asio::error::invalid_argument);
  }
  stream.expires_never();
  co_return error_code{};
}

}  // namespace sb::net
