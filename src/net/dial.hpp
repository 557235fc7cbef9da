// The first steps of every outbound connection, shared by the HTTP client and the WebSocket
// transport: name lookup and TCP connect under one deadline, then (through a proxy) the CONNECT
// tunnel. Internal to net/. Both run on the stream's executor and report plain error codes;
// beast::error::timeout means the deadline passed.
//   error_code ec = co_await Dial(stream, host, port, deadline);
//   int status = 0;
//   if (!ec) ec = co_await OpenTunnel(stream, "example.com:443", proxy, agent, deadline, status);
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <string>

#include "net/proxy.hpp"

namespace sb::net {

// Resolves host:port and connects `stream` (not yet open) to the first address that answers,
// with TCP_NODELAY set. Asio's resolver ignores timers, so a lookup past the deadline is
// abandoned rather than awaited.
boost::asio::awaitable<boost::system::error_code> Dial(
    boost::beast::tcp_stream& stream, const std::string& host, const std::string& port,
    std::chrono::steady_clock::time_point deadline);

// Asks the proxy `stream` is connected to for a tunnel to `authority` ("host:port"). A refusal
// (non-2xx) fails with asio::error::connection_refused and sets `refused_status`. Reads nothing
// past the proxy's answer, so the tunnel's first byte is left for TLS or the upgrade.
boost::asio::awaitable<boost::system::error_code> OpenTunnel(
    boost::beast::tcp_stream& stream, const std::string& authority, const ProxyConfig& proxy,
    const std::string& user_agent, std::chrono::steady_clock::time_point deadline,
    int& refused_status);

}  // namespace sb::net
