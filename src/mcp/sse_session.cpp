#include "mcp/sse_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cctype>

#include "net/stream_parsers.hpp"

namespace sb::mcp {

namespace asio = boost::asio;
using util::ErrorCode;
using namespace std::chrono_literals;

namespace {

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kMaxEndpointBytes = 2048;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "http://host:port" of an absolute URL, lower-cased, default ports made explicit; empty when
// it is not http(s).
std::string OriginOf(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {};
  const std::string scheme = Lower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") return {};
  std::string_view rest = url.substr(scheme_end + 3);
  std::string authority = Lower(rest.substr(0, rest.find_first_of("/?#")));
  if (authority.empty() || authority.find('@') != std::string::npos) return {};
  const auto colon = authority.rfind(':');
  if (colon == std::string::npos || authority.back() == ']') {
    authority += scheme == "https" ? ":443" : ":80";
  }
  return scheme + "://" + authority;
}

}  // namespace

std::string ResolveSameOrigin(const std::string& base, const std::string& endpoint) {
  if (endpoint.empty() || endpoint.size() > kMaxEndpointBytes) return {};
  for (char c : endpoint) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return {};
  }
  const std::string origin = OriginOf(base);
  if (origin.empty()) return {};
  const auto scheme_end = base.find("://");
  const std::string_view after = std::string_view(base).substr(scheme_end + 3);
  const auto path_at = after.find_first_of("/?#");
  // The base as written (not lower-cased) up to its path.
  const std::string prefix =
      base.substr(0, scheme_end + 3 + (path_at == std::string_view::npos ? after.size() : path_at));
  std::string resolved;
  if (endpoint.find("://") != std::string::npos && endpoint.find("://") < endpoint.find('/')) {
    resolved = endpoint;
  } else if (endpoint.rfind("//", 0) == 0) {
    resolved = base.substr(0, scheme_end + 1) + endpoint;
  } else if (endpoint.front() == '/') {
    resolved = prefix + endpoint;
  } else {
    // Relative to the base's folder.
    std::string path = path_at == std::string_view::npos ? "/" : std::string(after.substr(path_at));
    path = path.substr(0, path.find_first_of("?#"));
    path = path.substr(0, path.rfind('/') + 1);
    if (path.empty()) path = "/";
    resolved = prefix + path + endpoint;
  }
  if (OriginOf(resolved) != origin) return {};
  return resolved;
}

// What the stream reader and the calls share; outlives the session while the stream runs.
// Touched only on the session's executor.
struct SseSession::State {
  State(net::HttpClient& client, asio::any_io_executor executor, SseTarget t)
      : http(client),
        target(std::move(t)),
        pending(executor),
        endpoint_signal(executor),
        done_signal(executor) {}

  net::HttpClient& http;
  const SseTarget target;
  PendingRequests pending;
  asio::steady_timer endpoint_signal;  // cancelled when the endpoint arrives or the stream ends
  asio::steady_timer done_signal;      // cancelled when the stream coroutine ends
  asio::cancellation_signal cancel;    // ends the GET
  std::string endpoint;
  // Read by the stream's sink on the HTTP client's strand: stop reading.
  std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);
  bool started = false;
  bool ended = false;
  bool done = false;
  bool tools_changed = false;
  util::Error end_reason;

  void End(const util::Error& why) {
    if (ended) return;
    ended = true;
    end_reason = why;
    stop->store(true);
    if (started && !done) cancel.emit(asio::cancellation_type::terminal);
    pending.FailAll(why);
    endpoint_signal.cancel();
  }

  net::HttpRequest NewPost(std::string body) const {
    net::HttpRequest req;
    req.method = "POST";
    req.url = endpoint;
    req.body = std::move(body);
    req.headers = target.headers;
    req.headers.emplace_back("Content-Type", "application/json");
    req.timeouts.connect = req.timeouts.total = req.timeouts.idle = target.limits.timeout;
    req.max_response_bytes = 64 * 1024;  // "Accepted", or an error page
    return req;
  }

  // POSTs a message; kUnavailable when the server no longer knows the session (404).
  static asio::awaitable<util::Result<void>> Post(std::shared_ptr<State> s, std::string body,
                                                  std::string_view what) {
    auto res = co_await s->http.Send(s->NewPost(std::move(body)));
    if (!res) co_return tl::make_unexpected(res.error());
    if (res->status == 404) {
      s->End(util::Error{ErrorCode::kUnavailable, "the server ended the MCP session"});
      co_return util::Fail(ErrorCode::kUnavailable, "the server ended the MCP session");
    }
    if (res->status / 100 != 2) {
      co_return util::Fail(ErrorCode::kUpstreamFailed,
                           fmt::format("{} answered HTTP {}", what, res->status));
    }
    co_return util::Ok();
  }

  // A `message` event: false ends the stream.
  bool OnMessage(const std::shared_ptr<State>& self, const std::string& data) {
    Message m = ParseMessage(data);
    switch (m.kind) {
      case Message::Kind::kInvalid:
        End(InvalidRpc(m.invalid_reason));
        return false;
      case Message::Kind::kResponse:
        pending.Deliver(std::move(m));  // a late answer (after its deadline) is dropped
        return true;
      case Message::Kind::kRequest: {
        std::string answer = m.method == "ping" ? BuildResult(m.id, {})
                                                : BuildError(m.id, -32601, "Method not found");
        asio::co_spawn(
            done_signal.get_executor(),
            [self, answer = std::move(answer)]() mutable -> asio::awaitable<void> {
              (void)co_await Post(self, std::move(answer), "an answer to the server");
            },
            asio::detached);
        return true;
      }
      case Message::Kind::kNotification:
        if (m.method == "notifications/tools/list_changed") tools_changed = true;
        return true;
    }
    return true;
  }

  // An event of the stream, on the session's executor.
  void OnEvent(const std::shared_ptr<State>& self, const net::SseEvent& e) {
    if (ended) return;
    if (e.event == "endpoint") {
      if (!endpoint.empty()) return;  // the first one counts
      endpoint = ResolveSameOrigin(target.url, e.data);
      if (endpoint.empty()) {
        End(util::Error{ErrorCode::kUpstreamFailed,
                        fmt::format("the server's endpoint '{}' is not of the url's origin",
                                    e.data.substr(0, 200))});
      }
      endpoint_signal.cancel();
      return;
    }
    if (!e.event.empty() && e.event != "message") return;
    if (!e.data.empty()) OnMessage(self, e.data);
  }

  static asio::awaitable<void> Stream(std::shared_ptr<State> s) {
    net::HttpRequest req;
    req.method = "GET";
    req.url = s->target.url;
    req.headers = s->target.headers;
    req.headers.emplace_back("Accept", "text/event-stream");
    req.headers.emplace_back("Cache-Control", "no-cache");
    req.timeouts.connect = s->target.limits.timeout;
    req.timeouts.idle = s->target.read_timeout;
    req.timeouts.total = std::chrono::hours(24 * 365);  // as long as the session lives
    req.max_response_bytes = s->target.max_stream_bytes;
    net::SseParser sse;
    sse.max_event_bytes = s->target.limits.max_message_bytes;
    bool too_long = false;
    // The sink runs on the HTTP client's connection strand: it parses, and hands each event to
    // the session's executor in order; only `stop` is shared (atomic).
    auto executor = s->done_signal.get_executor();
    auto sink = [&](std::string_view piece) {
      if (s->stop->load()) return false;
      const bool fits = sse.Feed(piece, [&](const net::SseEvent& e) {
        asio::post(executor, [s, e] { s->OnEvent(s, e); });
      });
      if (!fits) too_long = true;
      return fits && !s->stop->load();
    };
    auto res = co_await s->http.Send(std::move(req), sink);
    s->done = true;  // before End: nothing left to cancel
    if (too_long) {
      s->End(TooLong(s->target.limits.max_message_bytes));
    } else if (!res && s->endpoint.empty()) {
      s->End(res.error());  // never connected: unreachable, refused, timed out
    } else if (!res) {
      const bool silent = res.error().code == ErrorCode::kUpstreamTimeout;
      s->End(util::Error{ErrorCode::kUnavailable,
                         silent ? fmt::format("the server's event stream was silent for {} ms",
                                              s->target.read_timeout.count())
                                : "the server's event stream failed: " + res.error().message});
    } else if (res->status / 100 != 2) {
      s->End(util::Error{ErrorCode::kUpstreamFailed,
                         fmt::format("the event stream's GET answered HTTP {}", res->status)});
    } else {
      s->End(util::Error{ErrorCode::kUnavailable, "the server's event stream ended"});
    }
    s->done_signal.cancel();
  }
};

SseSession::SseSession(net::HttpClient& http, asio::any_io_executor executor, SseTarget target)
    : RpcSession(target.limits),
      executor_(executor),
      state_(std::make_shared<State>(http, executor, std::move(target))) {}

SseSession::~SseSession() {
  asio::dispatch(executor_, [s = state_] {
    s->End(util::Error{ErrorCode::kUnavailable, "the session was dropped"});  // cancels the GET
  });
}

bool SseSession::tools_changed() const { return tools_changed_ || state_->tools_changed; }

bool SseSession::alive() const { return state_->started && !state_->ended; }

const std::string& SseSession::endpoint() const { return state_->endpoint; }

asio::awaitable<util::Result<std::vector<Tool>>> SseSession::ListTools() {
  state_->tools_changed = false;
  co_return co_await RpcSession::ListTools();
}

asio::awaitable<util::Result<void>> SseSession::Connect() {
  auto s = state_;
  if (s->started) co_return util::Fail(ErrorCode::kInternal, "the session was already started");
  s->started = true;
  asio::co_spawn(executor_, State::Stream(s),
                 asio::bind_cancellation_slot(s->cancel.slot(), asio::detached));
  if (s->endpoint.empty() && !s->ended) {
    s->endpoint_signal.expires_after(s->target.limits.timeout);
    co_await s->endpoint_signal.async_wait(kUseTuple);
  }
  if (!s->endpoint.empty() && !s->ended) co_return util::Ok();
  if (s->ended) co_return tl::make_unexpected(s->end_reason);
  s->End(util::Error{ErrorCode::kUpstreamTimeout,
                     fmt::format("the server sent no endpoint event within {} ms",
                                 s->target.limits.timeout.count())});
  co_return tl::make_unexpected(s->end_reason);
}

asio::awaitable<util::Result<util::Json>> SseSession::Request(std::string_view method,
                                                              util::JsonObject params,
                                                              std::chrono::milliseconds timeout) {
  auto s = state_;
  if (!s->started || s->ended) {
    co_return util::Fail(ErrorCode::kUnavailable, "the MCP session's event stream is closed");
  }
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t id = s->pending.Add();
  auto posted = co_await State::Post(s, BuildRequest(id, method, std::move(params)), method);
  if (!posted) s->pending.Fail(id, posted.error());
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  co_return co_await s->pending.Wait(id, method, std::max(timeout - spent, 1ms));
}

asio::awaitable<util::Result<void>> SseSession::Notify(std::string_view method) {
  auto s = state_;
  if (!s->started || s->ended) {
    co_return util::Fail(ErrorCode::kUnavailable, "the MCP session's event stream is closed");
  }
  co_return co_await State::Post(s, BuildNotification(method, {}), method);
}

asio::awaitable<void> SseSession::Close() {
  auto s = state_;
  if (!s->started) co_return;
  s->End(util::Error{ErrorCode::kUnavailable, "the session is closing"});  // cancels the GET
  if (s->done) co_return;
  s->done_signal.expires_after(5s);
  co_await s->done_signal.async_wait(kUseTuple);
}

}  // namespace sb::mcp
