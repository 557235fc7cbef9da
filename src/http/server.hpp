// The HTTP/1.1 server: accepts connections and runs one coroutine per connection that reads a
// request (with limits and timeouts), asks the Router for the response and writes it. Transport
// only; what a request means is the router's business. Include only from app/ (pulls in Asio).
//   HttpServer server(io, blocking_pool, router, metrics, options);
//   if (auto r = server.Start(); !r) ...      // bind failure names the address
//   server.StopAccepting(); server.WaitIdle(grace); server.CloseConnections();
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "http/metrics.hpp"
#include "http/router.hpp"
#include "util/error.hpp"

namespace sb::http {

struct ServerOptions {
  std::string host = "0.0.0.0";
  std::uint16_t port = 5300;  // 0: any free port
  std::size_t body_limit_bytes = 10 * 1024 * 1024;
  std::chrono::seconds header_timeout{10};  // headers once a request starts; longest body pause
  std::chrono::seconds body_timeout{60};    // the whole body
  std::chrono::seconds idle_timeout{60};
  std::vector<std::string> cors_allow_origins;  // "*" allows any
  // Open connections from one client address (an IPv6 client by its /64); more are closed as
  // soon as they are accepted. 0: no limit.
  std::size_t max_connections_per_address = 256;
};

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, boost::asio::thread_pool& blocking, Router& router,
             Metrics& metrics, ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting. kUnavailable naming the address when it cannot bind.
  util::Result<void> Start();
  std::uint16_t port() const;

  // Shutdown, in this order. Thread-safe; call from any thread but the I/O threads.
  void StopAccepting();
  // Waits until no request is being handled or `grace` passed; true when idle.
  bool WaitIdle(std::chrono::milliseconds grace);
  // Closes every connection (idle keep-alive ones included) and waits briefly for them to end.
  void CloseConnections();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace sb::http
