// In-process doubles for adapter tests: an HttpClient that answers from a script and records the
// requests, a host that records what the adapter reports (and any call after its Stop), and an
// io_context on two threads.
//   auto http = std::make_shared<ScriptedHttp>([](const net::HttpRequest&) { return Reply(200, "");
//   }); auto adapter = MakeLineAdapter(HttpAdapterContext(config, io, http, clock, host, "bot-1"));
//   adapter->Start();  ...  EXPECT_TRUE(StopAndWait(*adapter));
#pragma once

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.hpp"
#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"
#include "util/clock.hpp"

namespace sb::test {

inline net::HttpResponse Reply(int status, std::string body,
                               std::vector<std::pair<std::string, std::string>> headers = {}) {
  net::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

// Answers each request with `script(request)`; thread-safe.
class ScriptedHttp final : public net::HttpClient {
 public:
  using Script = std::function<util::Result<net::HttpResponse>(const net::HttpRequest&)>;
  explicit ScriptedHttp(Script script) : script_(std::move(script)) {}

  boost::asio::awaitable<util::Result<net::HttpResponse>> Send(net::HttpRequest request,
                                                               net::BodySink) override {
    Script script;
    {
      std::lock_guard lock(mu_);
      requests_.push_back(request);
      script = script_;
    }
    co_return script(request);
  }

  void SetScript(Script script) {
    std::lock_guard lock(mu_);
    script_ = std::move(script);
  }
  std::vector<net::HttpRequest> Requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::vector<net::HttpRequest> RequestsTo(const std::string& url_suffix) {
    std::vector<net::HttpRequest> out;
    for (auto& r : Requests()) {
      if (r.url.ends_with(url_suffix)) out.push_back(r);
    }
    return out;
  }

 private:
  std::mutex mu_;
  Script script_;                           // guarded by mu_
  std::vector<net::HttpRequest> requests_;  // guarded by mu_
};

inline std::string HeaderOf(const net::HttpRequest& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return {};
}

class RecordingHost final : public platforms::AdapterHost {
 public:
  void OnMessage(platforms::ReceivedMessage message) override {
    Add([&] { messages.push_back(std::move(message)); });
  }
  void OnConnected(std::string id) override {
    Add([&] { connected.push_back(std::move(id)); });
  }
  void OnTrouble(std::string why) override {
    Add([&] { troubles.push_back(std::move(why)); });
  }
  void Log(domain::LogLevel, std::string text) override {
    Add([&] { logs.push_back(std::move(text)); });
  }
  void OnFeedback(domain::ReceivedFeedback f) override {
    Add([&] { feedback.push_back(std::move(f)); });
  }

  // Waits until `ready` (called under the lock) holds; false after `timeout`.
  template <typename Ready>
  bool WaitFor(Ready ready, std::chrono::milliseconds timeout = std::chrono::seconds(8)) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return ready(); });
  }
  template <typename Reader>
  auto Read(Reader read) {
    std::lock_guard lock(mu);
    return read();
  }

  std::mutex mu;
  std::condition_variable cv;
  std::vector<platforms::ReceivedMessage> messages;  // guarded by mu
  std::vector<std::string> connected;                // guarded by mu
  std::vector<std::string> troubles;                 // guarded by mu
  std::vector<std::string> logs;                     // guarded by mu
  std::vector<domain::ReceivedFeedback> feedback;    // guarded by mu
  // Set by a test once the adapter's Stop callback ran; host calls after that are counted.
  std::atomic<bool> stopped{false};
  std::atomic<int> after_stop_calls{0};

 private:
  template <typename Change>
  void Add(Change change) {
    if (stopped) ++after_stop_calls;
    {
      std::lock_guard lock(mu);
      change();
    }
    cv.notify_all();
  }
};

// An io_context run by two threads for the test's lifetime.
class IoThreads {
 public:
  IoThreads() : work_(io_.get_executor()) {
    for (auto& t : threads_) t = std::thread([this] { io_.run(); });
  }
  ~IoThreads() {
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }
  boost::asio::any_io_executor executor() { return io_.get_executor(); }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread threads_[2];
};

// The context of an adapter under test that talks HTTP only: its `config`, the (scripted) client,
// `clock` and the recording `host`, run on `io`'s threads.
inline platforms::AdapterContext HttpAdapterContext(util::JsonObject config, IoThreads& io,
                                                    std::shared_ptr<net::HttpClient> http,
                                                    const util::Clock& clock, RecordingHost& host,
                                                    std::string bot_uuid = {}) {
  platforms::AdapterContext context;
  context.bot_uuid = std::move(bot_uuid);
  context.config = std::move(config);
  context.executor = io.executor();
  context.http = std::move(http);
  context.clock = &clock;
  context.host = &host;
  return context;
}

// The answer to one HandleWebhook call, waited for.
inline platforms::WebhookAnswer CallWebhook(platforms::PlatformAdapter& adapter,
                                            platforms::WebhookCall call) {
  auto promise = std::make_shared<std::promise<platforms::WebhookAnswer>>();
  auto future = promise->get_future();
  adapter.HandleWebhook(
      std::move(call), [promise](platforms::WebhookAnswer a) { promise->set_value(std::move(a)); });
  if (future.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    return {-1, "", "no answer"};
  }
  return future.get();
}

// The result of one Send, waited for.
inline util::Result<domain::SendReceipt> SendAndWait(platforms::PlatformAdapter& adapter,
                                                     domain::OutgoingMessage message,
                                                     std::string reply_to = {}) {
  auto promise = std::make_shared<std::promise<util::Result<domain::SendReceipt>>>();
  auto future = promise->get_future();
  adapter.Send(
      std::move(message), std::move(reply_to),
      [promise](util::Result<domain::SendReceipt> r) { promise->set_value(std::move(r)); });
  if (future.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    return util::Fail(util::ErrorCode::kInternal, "Send did not complete");
  }
  return future.get();
}

// Stops `adapter` and waits for its callback; true when it ran in time.
inline bool StopAndWait(platforms::PlatformAdapter& adapter) {
  auto promise = std::make_shared<std::promise<void>>();
  auto future = promise->get_future();
  adapter.Stop([promise] { promise->set_value(); });
  return future.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
}

}  // namespace sb::test
