// Tests of the WebSocket transport (src/net/websocket.hpp): our client against our listener on
// 127.0.0.1 port 0, raw sockets speaking RFC 6455 by hand where the client cannot misbehave on
// purpose, and the client against an independent implementation (Python's `websockets`, with
// TLS and a CONNECT proxy) run as a child process.
#include "net/websocket.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
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
    if (!co_await conn->Write(std::move(message->data), message->binary)) co_return;
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

TEST_F(WebSocketTest, MalformedUrlAndSchemeAreInvalidArguments) {
  auto bad = Connect("not a url");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  auto http = Connect("http://127.0.0.1:1/ws");
  ASSERT_FALSE(http);
  EXPECT_EQ(http.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace sb::net
