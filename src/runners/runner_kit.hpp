// What every external runner needs besides its own wire format: the calls in flight with
// cancellation, a bounded memory of the service's conversation id per chat session, a JSON POST
// with the configured deadline, a reader of streamed SSE bodies, and errors that never carry a
// key. Runners get the first two through HostedRunner (hosted_runner.hpp).
//   CallLauncher calls(executor);
//   calls.Launch("langflow", [=]() -> asio::awaitable<Result<AgentReply>> {...}, done);
//   SessionIds ids; ids.Remember(SessionKey(input.conversation), "conv-1");
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/http_client.hpp"
#include "net/stream_parsers.hpp"
#include "pipeline/config_values.hpp"
#include "pipeline/engine.hpp"

namespace sb::runners {

class Call;

// The (pipeline, bot, session) a service conversation belongs to, as one map key.
std::string SessionKey(const domain::ConversationKey& key);

// Service conversation/session ids by SessionKey. Thread-safe; at most `max` entries, the least
// recently used forgotten first.
class SessionIds {
 public:
  explicit SessionIds(std::size_t max = 10'000) : max_(max == 0 ? 1 : max) {}
  std::string Lookup(const std::string& key);  // empty when none
  void Remember(const std::string& key, std::string id);
  void Drop(const std::string& key);

 private:
  using Entries = std::list<std::pair<std::string, std::string>>;
  std::size_t max_;
  std::mutex mu_;
  Entries recent_;                                             // most recent first; guarded by mu_
  std::unordered_map<std::string, Entries::iterator> by_key_;  // guarded by mu_
};

// Runs runner calls as coroutines, each on its own strand with a cancellation signal. Thread-safe.
class CallLauncher {
 public:
  using Body = std::function<boost::asio::awaitable<util::Result<pipeline::AgentReply>>()>;
  using Done = std::function<void(util::Result<pipeline::AgentReply>)>;

  explicit CallLauncher(boost::asio::any_io_executor executor) : executor_(std::move(executor)) {}

  // `done` runs exactly once on an I/O thread; an exception in `body` becomes kInternal (or
  // kCancelled when the call was aborted) with `service` named in the message.
  void Launch(std::string service, Body body, Done done);
  // Every call in flight ends with kCancelled (shutdown).
  void CancelAll();

 private:
  boost::asio::any_io_executor executor_;
  std::mutex mu_;
  std::vector<std::weak_ptr<Call>> calls_;  // guarded by mu_
};

// Reads a Server-Sent Events response body as it arrives: each event goes to `on_event`, which
// returns false to stop reading (the call then ends with kCancelled); an event over the parser's
// limit stops it too. The first 4 KiB are kept for services that answer some failures with JSON
// instead of a stream. Sink() refers to the reader: keep it alive until the call is over.
//   SseReader reader([&](const net::SseEvent& e) { return OnEvent(e, stream); });
//   auto sent = co_await http->Send(std::move(request), reader.Sink());
class SseReader {
 public:
  using OnEvent = std::function<bool(const net::SseEvent&)>;
  explicit SseReader(OnEvent on_event) : on_event_(std::move(on_event)) {}

  net::BodySink Sink();
  // At the end of a complete body: the last event, when no blank line followed it.
  void Finish();
  bool too_big() const { return too_big_; }
  const std::string& head() const { return head_; }

 private:
  OnEvent on_event_;
  net::SseParser parser_;
  std::string head_;
  bool too_big_ = false;
};

// `text` with every occurrence of `secret` (when 4+ characters) replaced by "[redacted]".
std::string Redact(std::string text, const std::string& secret);

// The `timeout` setting in seconds at `path`: missing, non-positive or NaN gives `fallback`;
// capped at a day.
std::chrono::milliseconds TimeoutSetting(const util::JsonObject& config, pipeline::ConfigPath path,
                                         double fallback_seconds);

// `url` without trailing slashes.
std::string TrimBase(std::string url);

// The text parts of the user's message, joined with newlines.
std::string InputText(const pipeline::AgentInput& input);

// A JSON POST bounded by `timeout` (connect at most 10 s), with an 8 MiB response cap.
net::HttpRequest JsonPost(std::string url, const util::Json& body,
                          std::chrono::milliseconds timeout, bool event_stream);

// A non-2xx answer as an error: 401/403 kUpstreamAuth, 404 kUpstreamNotFound, 429
// kUpstreamRateLimited, 408/504 kUpstreamTimeout, else kUpstreamFailed. `detail` is the
// service's own explanation (shortened); `secret` is redacted from the message.
util::Error StatusError(std::string_view service, int status, std::string_view detail,
                        const std::string& secret);

// A transport failure from net::HttpClient, prefixed with the service name, secret redacted.
util::Error TransportError(std::string_view service, util::Error error, const std::string& secret);

// String and integer members of a JSON object, empty/0 when missing or mistyped.
std::string StringField(const util::JsonObject& object, std::string_view key);
std::int64_t IntField(const util::JsonObject& object, std::string_view key);
// The object member `key`, or null.
const util::JsonObject* ObjectField(const util::JsonObject& object, std::string_view key);

}  // namespace sb::runners
