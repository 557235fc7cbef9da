// Tests of the WebSocket transport (src/net/websocket.hpp): our client against our listener on
// 127.0.0.1 port 0, raw sockets speaking RFC 6455 by hand where the client cannot misbehave on
// purpose, and the client against an independent implementation (Python's `websockets`, with
// TLS and a CONNECT proxy) run as a child process.
#include "net/websocket.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/eventually.hpp"

namespace sb::net {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using util::ErrorCode;
using util::Result;

using ConnPtr = std::shared_ptr<WebSocketConnection>;

// An io_context on two threads (the transport's callers and its strands really run in
// parallel) and the transport on it.
struct IoRig {
  explicit IoRig(HttpClientOptions options = {}) {
    transport = MakeWebSocketTransport(io.get_executor(), std::move(options));
    for (int i = 0; i < 2; ++i) threads.emplace_back([this] { io.run(); });
  }
  ~IoRig() {
    transport.reset();
    work.reset();
    io.stop();
    for (auto& t : threads) t.join();
  }
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{io.get_executor()};
  std::shared_ptr<WebSocketTransport> transport;
  std::vector<std::thread> threads;
};

// Runs `op` on the context and waits for its result; a test that would hang aborts instead.
template <typename T>
T Await(asio::io_context& io, asio::awaitable<T> op, std::chrono::seconds limit = 20s) {
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  asio::co_spawn(io, std::move(op), [promise](std::exception_ptr e, T value) {
    if (e) {
      promise->set_exception(e);
    } else {
      promise->set_value(std::move(value));
    }
  });
  if (future.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "operation did not finish within " << limit.count() << " s";
    std::abort();
  }
  return future.get();
}

// Connections our listener opened, for the test to drive.
class Opened {
 public:
  void Add(ConnPtr conn, WebSocketUpgrade upgrade) {
    std::lock_guard lock(mutex_);
    conns_.push_back(std::move(conn));
    upgrades_.push_back(std::move(upgrade));
    cv_.notify_all();
  }
  // The n-th connection (0-based), waiting for it; null after 10 s.
  ConnPtr Get(std::size_t n) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, 10s, [&] { return conns_.size() > n; });
    return conns_.size() > n ? conns_[n] : nullptr;
  }
  WebSocketUpgrade Upgrade(std::size_t n) {
    Get(n);
    std::lock_guard lock(mutex_);
    return upgrades_.at(n);
  }
  void Clear() {
    std::lock_guard lock(mutex_);
    conns_.clear();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<ConnPtr> conns_;
  std::vector<WebSocketUpgrade> upgrades_;
};

// Echoes every message back, as it came (text or binary), until the connection ends.
asio::awaitable<void> Echo(ConnPtr conn) {
  for (;;) {
    auto message = co_await conn->Read();
    if (!message) co_return;
    auto written = co_await conn->Write(std::move(message->data), message->binary);
    if (!written) co_return;
  }
}

class WebSocketTest : public ::testing::Test {
 protected:
  // A listener on 127.0.0.1 that accepts "/ws" and refuses the rest with 404.
  std::shared_ptr<WebSocketListener> Listen(WebSocketListenOptions options = {},
                                            bool echo = false) {
    options.host = "127.0.0.1";
    auto listener = rig_.transport->Listen(
        options,
        [](const WebSocketUpgrade& up) {
          if (up.target.rfind("/ws", 0) == 0) return WebSocketVerdict{};
          if (up.target.rfind("/private", 0) == 0) {
            return WebSocketVerdict{401, "token required"};
          }
          return WebSocketVerdict{404, "no such socket"};
        },
        [this, echo](ConnPtr conn, WebSocketUpgrade upgrade) {
          if (echo) asio::co_spawn(rig_.io, Echo(conn), asio::detached);
          opened_.Add(std::move(conn), std::move(upgrade));
        });
    EXPECT_TRUE(listener) << listener.error().message;
    return listener ? *listener : nullptr;
  }

  Result<ConnPtr> Connect(const std::string& url, WebSocketConnectRequest request = {}) {
    request.url = url;
    return Await(rig_.io, rig_.transport->Connect(std::move(request)));
  }
  std::string Url(const std::shared_ptr<WebSocketListener>& listener,
                  const std::string& path = "/ws") {
    return "ws://127.0.0.1:" + std::to_string(listener->port()) + path;
  }
  Result<WebSocketMessage> Read(const ConnPtr& conn) { return Await(rig_.io, conn->Read()); }
  Result<void> Write(const ConnPtr& conn, std::string data, bool binary = false) {
    return Await(rig_.io, conn->Write(std::move(data), binary));
  }
  void Close(const ConnPtr& conn, int code, std::string reason) {
    Await(rig_.io, [](ConnPtr c, int code, std::string reason) -> asio::awaitable<bool> {
      co_await c->Close(code, std::move(reason));
      co_return true;
    }(conn, code, std::move(reason)));
  }

  IoRig rig_;
  Opened opened_;
};

TEST_F(WebSocketTest, TextAndBinaryMessagesGoBothWays) {
  auto listener = Listen();
  auto client = Connect(Url(listener, "/ws?token=abc"));
  ASSERT_TRUE(client) << client.error().message;
  auto server = opened_.Get(0);
  ASSERT_TRUE(server);
  EXPECT_EQ(opened_.Upgrade(0).target, "/ws?token=abc");
  EXPECT_EQ(opened_.Upgrade(0).Header("user-agent"), "Switchboard");
  EXPECT_EQ(server->remote_address().rfind("127.0.0.1:", 0), 0u) << server->remote_address();

  ASSERT_TRUE(Write(*client, "hello"));
  auto got = Read(server);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->data, "hello");
  EXPECT_FALSE(got->binary);

  const std::string bytes("\x00\x01\xff\xfe", 4);
  ASSERT_TRUE(Write(server, bytes, true));
  got = Read(*client);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->data, bytes);
  EXPECT_TRUE(got->binary);
}

TEST_F(WebSocketTest, UpgradeHeadersReachTheListenerLowerCased) {
  auto listener = Listen();
  WebSocketConnectRequest request;
  request.headers = {{"Authorization", "Bearer secret"}, {"X-Self-ID", "10001"}};
  auto client = Connect(Url(listener), request);
  ASSERT_TRUE(client) << client.error().message;
  auto upgrade = opened_.Upgrade(0);
  EXPECT_EQ(upgrade.Header("authorization"), "Bearer secret");
  EXPECT_EQ(upgrade.Header("x-self-id"), "10001");
  EXPECT_EQ(upgrade.Header("absent"), "");
}

TEST_F(WebSocketTest, OneMebibyteMessageArrivesWhole) {
  WebSocketListenOptions options;
  options.limits.max_message_bytes = 2 << 20;
  auto listener = Listen(options, /*echo=*/true);
  auto client = Connect(Url(listener));
  ASSERT_TRUE(client) << client.error().message;
  std::string big(1 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  ASSERT_TRUE(Write(*client, big));
  auto got = Read(*client);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->data.size(), big.size());
  EXPECT_TRUE(got->data == big);
}

TEST_F(WebSocketTest, MessageOverTheLimitClosesWith1009) {
  WebSocketListenOptions options;
  options.limits.max_message_bytes = 1024;
  auto listener = Listen(options);
  auto client = Connect(Url(listener));
  ASSERT_TRUE(client) << client.error().message;
  auto server = opened_.Get(0);
  ASSERT_TRUE(Write(*client, std::string(4096, 'x')));
  auto got = Read(server);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(got.error().message.find("1024"), std::string::npos) << got.error().message;
  EXPECT_EQ(server->close_info().code, 1009);
  auto client_got = Read(*client);
  ASSERT_FALSE(client_got);
  EXPECT_EQ((*client)->close_info().code, 1009);
}

TEST_F(WebSocketTest, ClientClosesWithCodeAndReason) {
  auto listener = Listen();
  auto client = Connect(Url(listener));
  ASSERT_TRUE(client) << client.error().message;
  auto server = opened_.Get(0);
  auto pending = std::async(std::launch::async, [&] { return Read(server); });
  Close(*client, 4000, "bye now");
  auto got = pending.get();
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ(server->close_info().code, 4000);
  EXPECT_EQ(server->close_info().reason, "bye now");
  EXPECT_EQ((*client)->close_info().code, 4000);  // the server's answer echoes the code
  auto after = Write(*client, "late");
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code, ErrorCode::kUpstreamFailed);
  Close(*client, 1000, "again");  // idempotent
}

TEST_F(WebSocketTest, ServerClosesWithCodeAndReason) {
  auto listener = Listen();
  auto client = Connect(Url(listener));
  ASSERT_TRUE(client) << client.error().message;
  auto server = opened_.Get(0);
  auto pending = std::async(std::launch::async, [&] { return Read(*client); });
  Close(server, 4001, "server says bye");
  auto got = pending.get();
  ASSERT_FALSE(got);
  EXPECT_EQ((*client)->close_info().code, 4001);
  EXPECT_EQ((*client)->close_info().reason, "server says bye");
  EXPECT_NE(got.error().message.find("4001"), std::string::npos) << got.error().message;
}

TEST_F(WebSocketTest, AbortIs1006OnTheOtherSide) {
  auto listener = Listen();
  auto client = Connect(Url(listener));
  ASSERT_TRUE(client) << client.error().message;
  auto server = opened_.Get(0);
  server->Abort();
  auto got = Read(*client);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ((*client)->close_info().code, 1006);
  EXPECT_EQ(server->close_info().code, 1006);
}

TEST_F(WebSocketTest, RefusedUpgradeNamesTheStatusButNotTheQuery) {
  auto listener = Listen();
  auto client = Connect(Url(listener, "/private?access_token=s3cr3t"));
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(client.error().message.find("401"), std::string::npos) << client.error().message;
  EXPECT_EQ(client.error().message.find("s3cr3t"), std::string::npos) << client.error().message;
  auto missing = Connect(Url(listener, "/nowhere"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("404"), std::string::npos) << missing.error().message;
}

TEST_F(WebSocketTest, StopClosesEveryConnectionWith1001AndReportsOnce) {
  auto listener = Listen();
  std::vector<ConnPtr> clients;
  for (int i = 0; i < 3; ++i) {
    auto client = Connect(Url(listener));
    ASSERT_TRUE(client) << client.error().message;
    clients.push_back(*client);
    ASSERT_TRUE(opened_.Get(static_cast<std::size_t>(i)));
  }
  std::atomic<int> stopped{0};
  listener->Stop([&] { ++stopped; });
  for (auto& client : clients) {
    auto got = Read(client);
    ASSERT_FALSE(got);
    EXPECT_EQ(client->close_info().code, 1001);
  }
  EXPECT_TRUE(test::Eventually([&] { return stopped.load() == 1; }));
  std::atomic<int> again{0};
  listener->Stop([&] { ++again; });
  EXPECT_TRUE(test::Eventually([&] { return again.load() == 1; }));
  EXPECT_EQ(stopped.load(), 1);
  auto late = Connect(Url(listener));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, ErrorCode::kUpstreamUnreachable);
}

// A blocking raw TCP client that speaks RFC 6455 by hand, for what our client never does.
class RawPeer {
 public:
  explicit RawPeer(std::uint16_t port) : socket_(io_) {
    socket_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  // Sends `request` and returns the response head (status line and headers).
  std::string Send(const std::string& request) {
    asio::write(socket_, asio::buffer(request));
    boost::system::error_code ec;
    const std::size_t n = asio::read_until(socket_, asio::dynamic_buffer(buffer_), "\r\n\r\n", ec);
    if (ec) return "";
    std::string head = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return head;
  }
  std::string Upgrade(const std::string& target = "/ws") {
    return Send("GET " + target +
                " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
  }
  // One masked client frame.
  void Frame(int opcode, const std::string& payload, bool fin) {
    std::string frame;
    frame += static_cast<char>((fin ? 0x80 : 0x00) | opcode);
    if (payload.size() < 126) {
      frame += static_cast<char>(0x80 | payload.size());
    } else {
      frame += static_cast<char>(0x80 | 126);
      frame += static_cast<char>(payload.size() >> 8);
      frame += static_cast<char>(payload.size() & 0xff);
    }
    const char mask[4] = {0x12, 0x34, 0x56, 0x78};
    frame.append(mask, 4);
    for (std::size_t i = 0; i < payload.size(); ++i) frame += payload[i] ^ mask[i % 4];
    asio::write(socket_, asio::buffer(frame));
  }
  // The next server frame as (opcode, payload); opcode -1 when the socket closed.
  std::pair<int, std::string> ReadFrame() {
    boost::system::error_code ec;
    auto need = [&](std::size_t n) {
      if (buffer_.size() < n) {
        asio::read(socket_, asio::dynamic_buffer(buffer_),
                   asio::transfer_at_least(n - buffer_.size()), ec);
      }
      return buffer_.size() >= n;
    };
    if (!need(2)) return {-1, ""};
    const int opcode = buffer_[0] & 0x0f;
    std::size_t len = static_cast<unsigned char>(buffer_[1]) & 0x7f;
    std::size_t head = 2;
    if (len == 126) {
      if (!need(4)) return {-1, ""};
      len = (static_cast<unsigned char>(buffer_[2]) << 8) | static_cast<unsigned char>(buffer_[3]);
      head = 4;
    }
    if (!need(head + len)) return {-1, ""};
    std::string payload = buffer_.substr(head, len);
    buffer_.erase(0, head + len);
    return {opcode, payload};
  }
  // True when the server closed the TCP connection within `limit`.
  bool ClosedWithin(std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    socket_.non_blocking(true);
    for (;;) {
      char byte;
      boost::system::error_code ec;
      socket_.read_some(asio::buffer(&byte, 1), ec);
      if (ec == asio::error::would_block) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(10ms);
        continue;
      }
      if (ec) return true;
    }
  }

 private:
  asio::io_context io_;
  tcp::socket socket_;
  std::string buffer_;
};

TEST_F(WebSocketTest, FragmentedFramesAreReassembledAndPingsAnswered) {
  auto listener = Listen();
  RawPeer peer(listener->port());
  ASSERT_NE(peer.Upgrade().find(" 101 "), std::string::npos);
  auto server = opened_.Get(0);
  ASSERT_TRUE(server);
  peer.Frame(0x1, "frag", false);
  peer.Frame(0x9, "are you there", true);  // a ping between the fragments
  peer.Frame(0x0, "mented ", false);
  peer.Frame(0x0, std::string(300, 'z'), true);
  auto pong = peer.ReadFrame();
  EXPECT_EQ(pong.first, 0xA);
  EXPECT_EQ(pong.second, "are you there");
  auto got = Read(server);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->data, "fragmented " + std::string(300, 'z'));
  EXPECT_FALSE(got->binary);
}

TEST_F(WebSocketTest, FragmentsOverTheLimitTogetherClose1009) {
  WebSocketListenOptions options;
  options.limits.max_message_bytes = 100;
  // After its 1009 frame Beast waits for the peer to drop the TCP connection, which this peer
  // never does: the idle timeout bounds that wait.
  options.limits.idle_timeout = 200ms;
  auto listener = Listen(options);
  RawPeer peer(listener->port());
  ASSERT_NE(peer.Upgrade().find(" 101 "), std::string::npos);
  auto server = opened_.Get(0);
  peer.Frame(0x2, std::string(60, 'a'), false);
  peer.Frame(0x0, std::string(60, 'b'), true);
  auto close = peer.ReadFrame();
  ASSERT_EQ(close.first, 0x8);
  ASSERT_GE(close.second.size(), 2u);
  EXPECT_EQ((static_cast<unsigned char>(close.second[0]) << 8) |
                static_cast<unsigned char>(close.second[1]),
            1009);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(Read(server));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  // The peer never sent a close frame of its own.
  EXPECT_EQ(server->close_info().code, 1006);
}

TEST_F(WebSocketTest, PlainHttpGets426AndGarbageGets400) {
  auto listener = Listen();
  RawPeer get(listener->port());
  const auto head = get.Send("GET /ws HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(head.find(" 426 "), std::string::npos) << head;
  EXPECT_NE(head.find("Upgrade: websocket"), std::string::npos) << head;
  RawPeer post(listener->port());
  EXPECT_NE(post.Send("POST /ws HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").find(" 400 "),
            std::string::npos);
  RawPeer garbage(listener->port());
  EXPECT_NE(garbage.Send("NOT HTTP AT ALL\r\n\r\n").find(" 400 "), std::string::npos);
}

TEST_F(WebSocketTest, OversizedUpgradeRequestIsRefusedWith431) {
  WebSocketListenOptions options;
  options.max_header_bytes = 2048;
  auto listener = Listen(options);
  WebSocketConnectRequest request;
  request.headers = {{"X-Padding", std::string(4096, 'p')}};
  auto client = Connect(Url(listener), request);
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(client.error().message.find("431"), std::string::npos) << client.error().message;
  EXPECT_TRUE(Connect(Url(listener)));  // a normal one still gets in
}

TEST_F(WebSocketTest, SilentUpgradeRequestIsDroppedAfterTheHandshakeTimeout) {
  WebSocketListenOptions options;
  options.limits.handshake_timeout = 200ms;
  auto listener = Listen(options);
  RawPeer peer(listener->port());
  EXPECT_TRUE(peer.ClosedWithin(3s));
}

TEST_F(WebSocketTest, IdleTimeoutDropsASilentPeer) {
  WebSocketListenOptions options;
  options.limits.idle_timeout = 150ms;
  auto listener = Listen(options);
  RawPeer peer(listener->port());  // upgrades, then never reads nor answers a ping
  ASSERT_NE(peer.Upgrade().find(" 101 "), std::string::npos);
  auto server = opened_.Get(0);
  const auto start = std::chrono::steady_clock::now();
  auto got = Read(server);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(got);
  EXPECT_EQ(server->close_info().code, 1006);
  EXPECT_GE(took, 250ms);  // a ping after 150 ms, then 150 ms more for any answer
  EXPECT_LT(took, 3s);
}

TEST_F(WebSocketTest, IdleTimeoutKeepsALivelyPeer) {
  WebSocketListenOptions options;
  options.limits.idle_timeout = 100ms;
  auto listener = Listen(options, /*echo=*/true);
  auto client = Connect(Url(listener));  // our client answers pings
  ASSERT_TRUE(client) << client.error().message;
  std::this_thread::sleep_for(600ms);  // several idle periods with no message at all
  ASSERT_TRUE(Write(*client, "still here"));
  auto got = Read(*client);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->data, "still here");
}

TEST_F(WebSocketTest, ConcurrentWritersKeepMessagesWholeAndOrdered) {
  auto listener = Listen();
  auto client = Connect(Url(listener));
  ASSERT_TRUE(client) << client.error().message;
  auto server = opened_.Get(0);
  constexpr int kWriters = 4;
  constexpr int kEach = 200;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w) {
    asio::co_spawn(
        rig_.io,
        [](ConnPtr conn, int w, std::atomic<int>& failures) -> asio::awaitable<void> {
          for (int i = 0; i < kEach; ++i) {
            // Sizes vary so some writes span several TCP segments.
            std::string body = std::to_string(w) + ":" + std::to_string(i) + ":";
            body += std::string(static_cast<std::size_t>((i * 977) % 20000),
                                static_cast<char>('a' + w));
            auto written = co_await conn->Write(std::move(body));
            if (!written) ++failures;
          }
        }(*client, w, failures),
        asio::detached);
  }
  std::vector<int> next(kWriters, 0);
  for (int n = 0; n < kWriters * kEach; ++n) {
    auto got = Read(server);
    ASSERT_TRUE(got) << got.error().message;
    const auto first = got->data.find(':');
    const auto second = got->data.find(':', first + 1);
    const int w = std::stoi(got->data.substr(0, first));
    const int i = std::stoi(got->data.substr(first + 1, second - first - 1));
    ASSERT_EQ(i, next[static_cast<std::size_t>(w)]) << "writer " << w << " out of order";
    ++next[static_cast<std::size_t>(w)];
    const std::string padding = got->data.substr(second + 1);
    ASSERT_EQ(padding,
              std::string(static_cast<std::size_t>((i * 977) % 20000), static_cast<char>('a' + w)));
  }
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(WebSocketTest, CancelledReadFailsAndTheConnectionGoesOn) {
  auto listener = Listen();
  auto client = Connect(Url(listener));
  ASSERT_TRUE(client) << client.error().message;
  auto server = opened_.Get(0);
  // The adapters' pattern: a read raced against a timer; the timer wins and cancels the read.
  auto raced = Await(rig_.io, [](ConnPtr conn) -> asio::awaitable<Result<WebSocketMessage>> {
    asio::steady_timer timer(co_await asio::this_coro::executor, 100ms);
    auto winner = co_await (conn->Read() || timer.async_wait(asio::use_awaitable));
    if (winner.index() == 0) co_return std::get<0>(std::move(winner));
    co_return util::Fail(ErrorCode::kInternal, "timer won");
  }(*client));
  ASSERT_FALSE(raced);
  EXPECT_EQ(raced.error().code, ErrorCode::kInternal);  // the read did not complete

  // A read cancelled through an explicit signal reports kCancelled.
  auto signal = std::make_shared<asio::cancellation_signal>();
  auto promise = std::make_shared<std::promise<Result<WebSocketMessage>>>();
  auto future = promise->get_future();
  asio::co_spawn(rig_.io, (*client)->Read(),
                 asio::bind_cancellation_slot(
                     signal->slot(), [promise](std::exception_ptr, Result<WebSocketMessage> r) {
                       promise->set_value(std::move(r));
                     }));
  std::this_thread::sleep_for(50ms);
  asio::post(rig_.io, [signal] { signal->emit(asio::cancellation_type::terminal); });
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  auto cancelled = future.get();
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error().code, ErrorCode::kCancelled);

  ASSERT_TRUE(Write(server, "after the cancel"));
  auto got = Read(*client);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->data, "after the cancel");
}

TEST_F(WebSocketTest, BindConflictIsUnavailableNamingTheAddress) {
  auto first = Listen();
  WebSocketListenOptions options;
  options.host = "127.0.0.1";
  options.port = first->port();
  auto second = rig_.transport->Listen(
      options, [](const WebSocketUpgrade&) { return WebSocketVerdict{}; },
      [](ConnPtr, WebSocketUpgrade) {});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(second.error().message.find("127.0.0.1:" + std::to_string(first->port())),
            std::string::npos)
      << second.error().message;
}

TEST_F(WebSocketTest, UpgradesBeyondMaxConnectionsGet503) {
  WebSocketListenOptions options;
  options.max_connections = 2;
  auto listener = Listen(options);
  auto a = Connect(Url(listener));
  auto b = Connect(Url(listener));
  ASSERT_TRUE(a && b);
  auto c = Connect(Url(listener));
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(c.error().message.find("503"), std::string::npos) << c.error().message;
  // Once one is gone its place is free again.
  Close(*a, 1000, "");
  ASSERT_TRUE(opened_.Get(0));
  EXPECT_TRUE(test::Eventually([&] { return static_cast<bool>(Connect(Url(listener))); }));
}

TEST_F(WebSocketTest, DroppingTheLastHandleClosesWith1001) {
  auto listener = Listen();
  auto client = Connect(Url(listener));
  ASSERT_TRUE(client) << client.error().message;
  ASSERT_TRUE(opened_.Get(0));
  opened_.Clear();  // the listener side's only handle
  auto got = Read(*client);
  ASSERT_FALSE(got);
  EXPECT_EQ((*client)->close_info().code, 1001);
}

TEST_F(WebSocketTest, DroppingTheHandleDuringAPendingReadIsSafe) {
  auto listener = Listen();
  auto client = Connect(Url(listener));
  ASSERT_TRUE(client) << client.error().message;
  auto server = opened_.Get(0);
  WebSocketConnection* raw = client->get();
  auto pending = std::async(std::launch::async, [&] { return Await(rig_.io, raw->Read()); });
  std::this_thread::sleep_for(50ms);
  client->reset();  // the adapter forgets the connection while its read loop still waits
  auto got = pending.get();
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, ErrorCode::kUpstreamFailed);
  ASSERT_FALSE(Read(server));
  EXPECT_EQ(server->close_info().code, 1001);
}

TEST_F(WebSocketTest, StopDuringAPendingReadEndsTheRead) {
  auto listener = Listen();
  auto client = Connect(Url(listener));
  ASSERT_TRUE(client) << client.error().message;
  auto server = opened_.Get(0);
  auto pending = std::async(std::launch::async, [&] { return Read(server); });
  std::this_thread::sleep_for(20ms);
  std::promise<void> stopped;
  listener->Stop([&] { stopped.set_value(); });
  auto got = pending.get();
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ(stopped.get_future().wait_for(10s), std::future_status::ready);
  listener.reset();
  server.reset();
  opened_.Clear();
}

// A TCP port that completes connections (the kernel's backlog) but never answers.
class SilentPort {
 public:
  SilentPort() : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {}
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  asio::io_context io_;
  tcp::acceptor acceptor_;
};

TEST_F(WebSocketTest, UnansweredUpgradeTimesOut) {
  SilentPort silent;
  WebSocketConnectRequest request;
  request.limits.handshake_timeout = 200ms;
  const auto start = std::chrono::steady_clock::now();
  auto client = Connect("ws://127.0.0.1:" + std::to_string(silent.port()) + "/", request);
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().code, ErrorCode::kUpstreamTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(WebSocketTest, ConnectIsCancellable) {
  SilentPort silent;
  const std::string url = "ws://127.0.0.1:" + std::to_string(silent.port()) + "/";
  const auto start = std::chrono::steady_clock::now();
  auto raced = Await(rig_.io,
                     [](std::shared_ptr<WebSocketTransport> transport,
                        std::string url) -> asio::awaitable<std::string> {
                       asio::steady_timer timer(co_await asio::this_coro::executor, 100ms);
                       // Locals, not temporaries inside the co_await: GCC 12 frees those
                       // twice.
                       WebSocketConnectRequest request;
                       request.url = std::move(url);
                       auto connect = transport->Connect(std::move(request));
                       auto winner =
                           co_await (std::move(connect) || timer.async_wait(asio::use_awaitable));
                       std::string outcome = winner.index() == 0 ? "connect finished" : "timer won";
                       co_return outcome;
                     }(rig_.transport, url));
  EXPECT_EQ(raced, "timer won");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // not the 10 s handshake timeout

  auto signal = std::make_shared<asio::cancellation_signal>();
  auto promise = std::make_shared<std::promise<Result<ConnPtr>>>();
  auto future = promise->get_future();
  WebSocketConnectRequest request;
  request.url = url;
  asio::co_spawn(rig_.io, rig_.transport->Connect(request),
                 asio::bind_cancellation_slot(signal->slot(),
                                              [promise](std::exception_ptr, Result<ConnPtr> r) {
                                                promise->set_value(std::move(r));
                                              }));
  std::this_thread::sleep_for(50ms);
  asio::post(rig_.io, [signal] { signal->emit(asio::cancellation_type::terminal); });
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
  auto cancelled = future.get();
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error().code, ErrorCode::kCancelled);
}

TEST_F(WebSocketTest, RefusedTcpConnectionIsUnreachable) {
  std::uint16_t port;
  {
    SilentPort closed;
    port = closed.port();
  }
  auto client = Connect("ws://127.0.0.1:" + std::to_string(port) + "/");
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().code, ErrorCode::kUpstreamUnreachable);
  EXPECT_NE(client.error().message.find("127.0.0.1"), std::string::npos);
}

TEST_F(WebSocketTest, StopDoesNotWaitForAnUpgradeStillBeingRead) {
  auto listener = Listen();  // handshake timeout: the default 10 s
  RawPeer idle(listener->port());
  RawPeer partial(listener->port());
  partial.Frame(0x1, "", true);  // some bytes, not a request
  std::this_thread::sleep_for(50ms);
  std::atomic<int> stopped{0};
  const auto start = std::chrono::steady_clock::now();
  listener->Stop([&] { ++stopped; });
  EXPECT_TRUE(test::Eventually([&] { return stopped.load() == 1; }, 3s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_TRUE(idle.ClosedWithin(1s));
}

TEST_F(WebSocketTest, AnAcceptorsOddStatusBecomes500) {
  WebSocketListenOptions options;
  options.host = "127.0.0.1";
  auto listener = rig_.transport->Listen(
      options,
      [](const WebSocketUpgrade&) {
        return WebSocketVerdict{1234, "?"};
      },
      [](ConnPtr, WebSocketUpgrade) {});
  ASSERT_TRUE(listener);
  auto client = Connect("ws://127.0.0.1:" + std::to_string((*listener)->port()) + "/");
  ASSERT_FALSE(client);
  EXPECT_NE(client.error().message.find("500"), std::string::npos) << client.error().message;
}

TEST_F(WebSocketTest, MalformedUrlAndSchemeAreInvalidArguments) {
  auto bad = Connect("not a url");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  auto http = Connect("http://127.0.0.1:1/ws");
  ASSERT_FALSE(http);
  EXPECT_EQ(http.error().code, ErrorCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Against an independent implementation: Python's `websockets` in a child process.

// A python3 that has the websockets module, or empty.
std::string FindPython() {
  for (const char* candidate : {"/usr/bin/python3", "python3"}) {
    const std::string probe = std::string(candidate) + " -c 'import websockets' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return candidate;
  }
  return {};
}

// A self-signed certificate for "localhost" only, written as PEM files; the certificate file
// doubles as the trusted CA file.
class TestCert {
 public:
  explicit TestCert(const std::filesystem::path& dir)
      : cert_file_((dir / "cert.pem").string()), key_file_((dir / "key.pem").string()) {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 7);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
    X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, "DNS:localhost");
    X509_add_ext(cert, san, -1);
    X509_EXTENSION_free(san);
    X509_sign(cert, key, EVP_sha256());
    FILE* f = std::fopen(cert_file_.c_str(), "w");
    PEM_write_X509(f, cert);
    std::fclose(f);
    f = std::fopen(key_file_.c_str(), "w");
    PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(f);
    X509_free(cert);
    EVP_PKEY_free(key);
  }
  const std::string& cert_file() const { return cert_file_; }
  const std::string& key_file() const { return key_file_; }

 private:
  std::string cert_file_;
  std::string key_file_;
};

// tests/unit/support/ws_peer.py as a child process.
class PythonPeer {
 public:
  PythonPeer(const std::string& python, const TestCert& cert) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      execlp(python.c_str(), python.c_str(), SB_WS_PEER, "--cert", cert.cert_file().c_str(),
             "--key", cert.key_file().c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    stdout_ = fdopen(out[0], "r");
    char line[256];
    while (stdout_ && std::fgets(line, sizeof line, stdout_)) {
      std::sscanf(line, "WS_PORT=%d", &ws_port_);
      std::sscanf(line, "WSS_PORT=%d", &wss_port_);
      if (std::sscanf(line, "PROXY_PORT=%d", &proxy_port_) == 1) break;
    }
  }
  ~PythonPeer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_) std::fclose(stdout_);
  }
  bool ready() const { return ws_port_ > 0 && wss_port_ > 0 && proxy_port_ > 0; }
  int ws_port() const { return ws_port_; }
  int wss_port() const { return wss_port_; }
  int proxy_port() const { return proxy_port_; }

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
  int ws_port_ = 0;
  int wss_port_ = 0;
  int proxy_port_ = 0;
};

class WebSocketPeerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    python_ = FindPython();
    if (python_.empty()) return;
    dir_ =
        std::filesystem::temp_directory_path() / ("sb_websocket_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    cert_ = new TestCert(dir_);
    peer_ = new PythonPeer(python_, *cert_);
  }
  static void TearDownTestSuite() {
    delete peer_;
    delete cert_;
    peer_ = nullptr;
    cert_ = nullptr;
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void SetUp() override {
    if (python_.empty()) {
      GTEST_SKIP() << "no python3 with the websockets module (apt install python3-websockets)";
    }
    ASSERT_TRUE(peer_->ready()) << "ws_peer.py did not start";
  }

  // A rig whose client trusts the test certificate, with `edit` applied to its options.
  static HttpClientOptions Options(std::function<void(HttpClientOptions&)> edit = nullptr) {
    HttpClientOptions options;
    options.ca_file = cert_->cert_file();
    if (edit) edit(options);
    return options;
  }
  static Result<ConnPtr> Connect(IoRig& rig, const std::string& url,
                                 WebSocketConnectRequest request = {}) {
    request.url = url;
    return Await(rig.io, rig.transport->Connect(std::move(request)));
  }
  static Result<WebSocketMessage> Ask(IoRig& rig, const ConnPtr& conn, std::string text) {
    if (auto written = Await(rig.io, conn->Write(std::move(text))); !written) {
      return tl::make_unexpected(written.error());
    }
    return Await(rig.io, conn->Read());
  }
  static std::string Ws(const std::string& host, const std::string& path = "/") {
    return "ws://" + host + ":" + std::to_string(peer_->ws_port()) + path;
  }
  static std::string Wss(const std::string& host, const std::string& path = "/") {
    return "wss://" + host + ":" + std::to_string(peer_->wss_port()) + path;
  }

  static inline std::string python_;
  static inline std::filesystem::path dir_;
  static inline TestCert* cert_ = nullptr;
  static inline PythonPeer* peer_ = nullptr;
};

TEST_F(WebSocketPeerTest, EchoTextBinaryAndAFragmentedReply) {
  IoRig rig(Options());
  WebSocketConnectRequest request;
  request.headers = {{"Authorization", "Bot abc"}};
  auto conn = Connect(rig, Ws("127.0.0.1", "/gateway?v=10&token=t0k"), request);
  ASSERT_TRUE(conn) << conn.error().message;
  auto echo = Ask(rig, *conn, "hello python");
  ASSERT_TRUE(echo) << echo.error().message;
  EXPECT_EQ(echo->data, "hello python");
  EXPECT_FALSE(echo->binary);

  const std::string bytes("\x00\x80\xff", 3);
  ASSERT_TRUE(Await(rig.io, (*conn)->Write(bytes, true)));
  auto binary = Await(rig.io, (*conn)->Read());
  ASSERT_TRUE(binary) << binary.error().message;
  EXPECT_EQ(binary->data, bytes);
  EXPECT_TRUE(binary->binary);

  auto fragments = Ask(rig, *conn, "fragments");
  ASSERT_TRUE(fragments) << fragments.error().message;
  EXPECT_EQ(fragments->data, "fragmented reply");

  auto path = Ask(rig, *conn, "path");
  ASSERT_TRUE(path);
  EXPECT_EQ(path->data, "/gateway?v=10&token=t0k");
  auto headers = Ask(rig, *conn, "headers");
  ASSERT_TRUE(headers);
  EXPECT_NE(headers->data.find(R"("authorization": "Bot abc")"), std::string::npos)
      << headers->data;
  EXPECT_NE(headers->data.find(R"("user-agent": "Switchboard")"), std::string::npos)
      << headers->data;
}

TEST_F(WebSocketPeerTest, OneMebibyteEachWay) {
  IoRig rig(Options());
  auto conn = Connect(rig, Ws("127.0.0.1"));
  ASSERT_TRUE(conn) << conn.error().message;
  std::string big(1 << 20, 'q');  // the Python server's default max_size is exactly 1 MiB
  big.front() = '<';
  big.back() = '>';
  auto echo = Ask(rig, *conn, big);
  ASSERT_TRUE(echo) << echo.error().message;
  EXPECT_TRUE(echo->data == big);
}

TEST_F(WebSocketPeerTest, ServerCloseCodeAndReasonReachUs) {
  IoRig rig(Options());
  auto conn = Connect(rig, Ws("127.0.0.1"));
  ASSERT_TRUE(conn) << conn.error().message;
  auto got = Ask(rig, *conn, "close 4002 python says bye");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ((*conn)->close_info().code, 4002);
  EXPECT_EQ((*conn)->close_info().reason, "python says bye");
}

TEST_F(WebSocketPeerTest, OurCloseIsAnswered) {
  IoRig rig(Options());
  auto conn = Connect(rig, Ws("127.0.0.1"));
  ASSERT_TRUE(conn) << conn.error().message;
  const auto start = std::chrono::steady_clock::now();
  Await(rig.io, [](ConnPtr c) -> asio::awaitable<bool> {
    co_await c->Close(1000, "done");
    co_return true;
  }(*conn));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ((*conn)->close_info().code, 1000);  // the peer's answer
  EXPECT_FALSE(Await(rig.io, (*conn)->Read()));
}

TEST_F(WebSocketPeerTest, WssWithTheCaFile) {
  IoRig rig(Options());
  auto conn = Connect(rig, Wss("localhost", "/secure"));
  ASSERT_TRUE(conn) << conn.error().message;
  auto echo = Ask(rig, *conn, "over tls");
  ASSERT_TRUE(echo) << echo.error().message;
  EXPECT_EQ(echo->data, "over tls");
  auto fragments = Ask(rig, *conn, "fragments");
  ASSERT_TRUE(fragments);
  EXPECT_EQ(fragments->data, "fragmented reply");
}

TEST_F(WebSocketPeerTest, WssHostNameMismatchFails) {
  IoRig rig(Options());
  // The certificate names localhost only, not the address.
  auto conn = Connect(rig, Wss("127.0.0.1"));
  ASSERT_FALSE(conn);
  EXPECT_EQ(conn.error().code, ErrorCode::kUpstreamUnreachable);
  EXPECT_NE(conn.error().message.find("127.0.0.1"), std::string::npos) << conn.error().message;
}

TEST_F(WebSocketPeerTest, WssWithoutTrustFailsAndVerifyOffAccepts) {
  IoRig untrusted;  // system CA store only
  auto conn = Connect(untrusted, Wss("localhost"));
  ASSERT_FALSE(conn);
  EXPECT_EQ(conn.error().code, ErrorCode::kUpstreamUnreachable);

  IoRig unchecked(Options([](auto& o) {
    o.ca_file.clear();
    o.verify_tls = false;
  }));
  auto insecure = Connect(unchecked, Wss("127.0.0.1"));
  ASSERT_TRUE(insecure) << insecure.error().message;
  EXPECT_TRUE(Ask(unchecked, *insecure, "ok"));
}

TEST_F(WebSocketPeerTest, ThroughTheProxyWithCredentials) {
  IoRig rig(Options([](auto& o) {
    o.proxy_url = "http://user:pass@127.0.0.1:" + std::to_string(peer_->proxy_port());
  }));
  // The gateway's name is never resolved by us: the proxy does that (here: to loopback).
  auto conn = Connect(rig, Ws("gateway.example.invalid", "/?token=secret"));
  ASSERT_TRUE(conn) << conn.error().message;
  auto echo = Ask(rig, *conn, "tunnelled");
  ASSERT_TRUE(echo) << echo.error().message;
  EXPECT_EQ(echo->data, "tunnelled");
  auto log = Ask(rig, *conn, "proxy-log");
  ASSERT_TRUE(log);
  // "user:pass" in Base64.
  const std::string expected =
      "CONNECT gateway.example.invalid:" + std::to_string(peer_->ws_port()) +
      " auth=Basic dXNlcjpwYXNz";
  EXPECT_NE(log->data.find(expected), std::string::npos) << log->data;
  EXPECT_EQ(log->data.find("secret"), std::string::npos) << log->data;

  auto secure = Connect(rig, Wss("localhost"));
  ASSERT_TRUE(secure) << secure.error().message;
  EXPECT_TRUE(Ask(rig, *secure, "tls in the tunnel"));
}

TEST_F(WebSocketPeerTest, NoProxyBypassesAndARefusedTunnelIsUnreachable) {
  IoRig rig(Options([](auto& o) {
    o.proxy_url = "http://127.0.0.1:" + std::to_string(peer_->proxy_port());
    o.no_proxy = "localhost";
  }));
  auto direct = Connect(rig, Wss("localhost"));
  ASSERT_TRUE(direct) << direct.error().message;
  auto log = Ask(rig, *direct, "proxy-log");
  ASSERT_TRUE(log);
  EXPECT_EQ(log->data.find("CONNECT localhost:" + std::to_string(peer_->wss_port()) + " auth=\""),
            std::string::npos)
      << log->data;

  // Port 1 on loopback is closed, so the proxy answers 502.
  auto refused = Connect(rig, "ws://gateway.example.invalid:1/");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUpstreamUnreachable);
  EXPECT_NE(refused.error().message.find("502"), std::string::npos) << refused.error().message;
}

}  // namespace
}  // namespace sb::net
