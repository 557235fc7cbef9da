// Model-call benchmarks (issue 3): the gateway's own cost per call against a zero-latency fake,
// streamed-token throughput, and 1,000 concurrent calls against a slow fake with memory
// watched. The fake is an in-process loopback server speaking OpenAI chat completions; the
// model name picks its behaviour: "fast", "stream-<tokens>", "slow-<ms>".
// Prints a Markdown section on stdout. Usage: sb_llm_bench [calls]
#include <fmt/format.h>
#include <malloc.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "llm/gateway.hpp"
#include "llm/requester_catalogue.hpp"
#include "net/http_client.hpp"

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

namespace {

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

std::string Between(const std::string& s, const std::string& open, char close) {
  auto a = s.find(open);
  if (a == std::string::npos) return {};
  a += open.size();
  return s.substr(a, s.find(close, a) - a);
}

asio::awaitable<void> Serve(tcp::socket socket) {
  boost::beast::flat_buffer buffer;
  for (;;) {
    bhttp::request<bhttp::string_body> req;
    auto [ec, n] = co_await bhttp::async_read(socket, buffer, req, kTuple);
    (void)n;
    if (ec) co_return;
    const std::string model = Between(req.body(), "\"model\":\"", '"');
    if (model.rfind("slow-", 0) == 0) {
      asio::steady_timer t(socket.get_executor(),
                           std::chrono::milliseconds(std::stoi(model.substr(5))));
      co_await t.async_wait(kTuple);
    }
    if (model.rfind("stream-", 0) == 0) {
      const long tokens = std::stol(model.substr(7));
      std::string head =
          "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
          "chunked\r\n\r\n";
      auto [we, wn] = co_await asio::async_write(socket, asio::buffer(head), kTuple);
      (void)wn;
      if (we) co_return;
      const std::string event =
          "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
          "\"delta\":{\"content\":\"tok \"},\"finish_reason\":null}]}\n\n";
      std::string batch;
      for (long i = 0; i < tokens; ++i) {
        batch += event;
        if (batch.size() > 32 * 1024 || i + 1 == tokens) {
          std::string chunk = fmt::format("{:x}\r\n{}\r\n", batch.size(), batch);
          auto [ce, cn] = co_await asio::async_write(socket, asio::buffer(chunk), kTuple);
          (void)cn;
          if (ce) co_return;
          batch.clear();
        }
      }
      const std::string tail =
          "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
          "\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
      std::string last = fmt::format("{:x}\r\n{}\r\n0\r\n\r\n", tail.size(), tail);
      co_await asio::async_write(socket, asio::buffer(last), kTuple);
      co_return;  // close after a stream
    }
    const std::string body =
        R"({"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,)"
        R"("message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],)"
        R"("usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}})";
    std::string res = fmt::format(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
        body.size(), body);
    auto [we, wn] = co_await asio::async_write(socket, asio::buffer(res), kTuple);
    (void)wn;
    if (we) co_return;
  }
}

asio::awaitable<void> Accept(tcp::acceptor& acceptor) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(kTuple);
    if (ec) co_return;
    asio::co_spawn(acceptor.get_executor(), Serve(std::move(socket)), asio::detached);
  }
}

sb::domain::ChatRequest Request(std::string model, bool stream) {
  sb::domain::ChatRequest r;
  r.model = std::move(model);
  r.stream = stream;
  sb::domain::ChatMessage m;
  m.role = "user";
  m.content.push_back({sb::domain::ContentPart::Kind::kText, "ping", {}});
  r.messages.push_back(std::move(m));
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  const int calls = argc > 1 ? std::atoi(argv[1]) : 20000;

  asio::io_context server_io(1);
  tcp::acceptor acceptor(server_io, {asio::ip::make_address("127.0.0.1"), 0});
  const auto port = acceptor.local_endpoint().port();
  asio::co_spawn(server_io, Accept(acceptor), asio::detached);
  std::thread server_thread([&] { server_io.run(); });

  asio::io_context io(1);
  auto work = asio::make_work_guard(io);
  std::thread client_thread([&] { io.run(); });
  auto requesters = *sb::llm::LoadRequesterCatalogue();
  auto client = sb::net::MakeHttpClient(io.get_executor(), {});
  sb::llm::GatewayOptions options;
  options.max_attempts = 1;
  options.timeouts.total = std::chrono::seconds(60);
  options.max_response_bytes = 256 * 1024 * 1024;  // the long stream below is ~24 MB
  auto gateway =
      std::make_shared<sb::llm::HttpLlmGateway>(io.get_executor(), client, requesters, options);
  const sb::domain::ProviderEndpoint endpoint{
      "openai-chat-completions", fmt::format("http://127.0.0.1:{}/v1", port), {"sk-bench"}};

  auto run_one = [&](sb::domain::ChatRequest r,
                     std::function<void(const sb::domain::ChatDelta&)> on_delta = nullptr) {
    std::promise<bool> p;
    gateway->Chat(endpoint, std::move(r), std::move(on_delta),
                  [&p](sb::util::Result<sb::domain::ChatResult> res) { p.set_value(bool(res)); });
    return p.get_future().get();
  };

  // 1. Sequential calls: wall time per call, server and client each on their own thread.
  for (int i = 0; i < 200; ++i) run_one(Request("fast", false));  // warm the pool
  auto t0 = Clock::now();
  int failures = 0;
  for (int i = 0; i < calls; ++i) failures += run_one(Request("fast", false)) ? 0 : 1;
  const double us_per_call =
      std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls;

  // 2. One stream of many tokens.
  const long tokens = 200000;
  std::atomic<long> seen{0};
  t0 = Clock::now();
  const bool stream_ok =
      run_one(Request(fmt::format("stream-{}", tokens), true),
              [&](const sb::domain::ChatDelta&) { seen.fetch_add(1, std::memory_order_relaxed); });
  const double stream_s = std::chrono::duration<double>(Clock::now() - t0).count();

  // 3. 1,000 calls in flight at once against a provider that takes 2 s.
  const int concurrent = 1000;
  const long rss_before = RssKb();
  std::atomic<int> done{0};
  std::atomic<int> ok{0};
  std::atomic<long> rss_peak{rss_before};
  t0 = Clock::now();
  for (int i = 0; i < concurrent; ++i) {
    gateway->Chat(endpoint, Request("slow-2000", false), nullptr, [&](auto res) {
      if (res) ok.fetch_add(1);
      done.fetch_add(1);
    });
  }
  while (done.load() < concurrent) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    rss_peak = std::max(rss_peak.load(), RssKb());
  }
  const double concurrent_s = std::chrono::duration<double>(Clock::now() - t0).count();
  malloc_trim(0);  // glibc keeps freed arenas; count what is really still held
  const long rss_after = RssKb();

  fmt::print("| measure | value |\n|---|---|\n");
  fmt::print(
      "| gateway round trip, sequential, zero-latency fake ({} calls, {} failed) | {:.1f} µs "
      "per call |\n",
      calls, failures, us_per_call);
  fmt::print("| streamed tokens ({} SSE events, one call{}) | {:.0f} tokens/s ({} delivered) |\n",
             tokens, stream_ok ? "" : ", FAILED", seen.load() / stream_s, seen.load());
  fmt::print("| {} concurrent calls, provider answers after 2 s | all done in {:.2f} s, {} ok |\n",
             concurrent, concurrent_s, ok.load());
  fmt::print(
      "| RSS before / peak / after (malloc_trim) the 1,000 calls | {:.1f} / {:.1f} / {:.1f} MB "
      "|\n",
      rss_before / 1024.0, rss_peak.load() / 1024.0, rss_after / 1024.0);

  work.reset();
  io.stop();
  client_thread.join();
  server_io.stop();
  server_thread.join();
  return 0;
}
