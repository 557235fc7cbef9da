#include "runners/runner_kit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/system/system_error.hpp>
#include <cmath>

#include "runners/call.hpp"

namespace sb::runners {

namespace asio = boost::asio;
using util::ErrorCode;

std::string SessionKey(const domain::ConversationKey& key) {
  return key.pipeline.str() + '\n' + key.bot.str() + '\n' + key.session_id;
}

std::string SessionIds::Lookup(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return {};
  recent_.splice(recent_.begin(), recent_, it->second);
  return it->second->second;
}

void SessionIds::Remember(const std::string& key, std::string id) {
  std::lock_guard lock(mu_);
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    it->second->second = std::move(id);
    recent_.splice(recent_.begin(), recent_, it->second);
    return;
  }
  recent_.emplace_front(key, std::move(id));
  by_key_.emplace(key, recent_.begin());
  while (by_key_.size() > max_) {
    by_key_.erase(recent_.back().first);
    recent_.pop_back();
  }
}

void SessionIds::Drop(const std::string& key) {
  std::lock_guard lock(mu_);
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    recent_.erase(it->second);
    by_key_.erase(it);
  }
}

namespace {

util::Error FromException(std::exception_ptr e, const std::string& service) {
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& se) {
    if (se.code() == asio::error::operation_aborted) {
      return {ErrorCode::kCancelled, "the call was cancelled"};
    }
    return {ErrorCode::kInternal, fmt::format("{} call failed: {}", service, se.what())};
  } catch (const std::exception& ex) {
    return {ErrorCode::kInternal, fmt::format("{} call failed: {}", service, ex.what())};
  }
}

}  // namespace

void CallLauncher::Launch(std::string service, Body body, Done done) {
  auto call = std::make_shared<Call>(executor_);
  {
    std::lock_guard lock(mu_);
    std::erase_if(calls_, [](const std::weak_ptr<Call>& w) { return w.expired(); });
    calls_.push_back(call);
  }
  auto start = [call,
                body = std::move(body)]() -> asio::awaitable<util::Result<pipeline::AgentReply>> {
    if (call->cancelled()) co_return util::Fail(ErrorCode::kCancelled, "the call was cancelled");
    co_return co_await body();
  };
  asio::co_spawn(
      call->strand(), std::move(start),
      asio::bind_cancellation_slot(call->signal().slot(),
                                   [call, service = std::move(service), done = std::move(done)](
                                       std::exception_ptr e, util::Result<pipeline::AgentReply> r) {
                                     if (e) r = tl::unexpected(FromException(e, service));
                                     done(std::move(r));
                                   }));
}

void CallLauncher::CancelAll() {
  std::vector<std::shared_ptr<Call>> live;
  {
    std::lock_guard lock(mu_);
    for (auto& weak : calls_) {
      if (auto call = weak.lock()) live.push_back(std::move(call));
    }
    calls_.clear();
  }
  for (auto& call : live) call->Cancel();
}

net::BodySink SseReader::Sink() {
  return [this](std::string_view piece) {
    constexpr std::size_t kHeadBytes = 4096;
    if (head_.size() < kHeadBytes) head_.append(piece.substr(0, kHeadBytes - head_.size()));
    bool keep_going = true;
    const bool fits = parser_.Feed(piece, [&](const net::SseEvent& event) {
      if (keep_going) keep_going = on_event_(event);
    });
    if (!fits) too_big_ = true;
    return keep_going && fits;
  };
}

void SseReader::Finish() {
  parser_.Finish([this](const net::SseEvent& event) { on_event_(event); });
}

std::string Redact(std::string text, const std::string& secret) {
  if (secret.size() < 4) return text;
  for (auto pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos)) {
    text.replace(pos, secret.size(), "[redacted]");
  }
  return text;
}

std::chrono::milliseconds TimeoutSetting(const util::JsonObject& config, pipeline::ConfigPath path,
                                         double fallback_seconds) {
  double seconds = pipeline::GetNumber(config, path, fallback_seconds);
  if (!(seconds > 0)) seconds = fallback_seconds;  // NaN and nonsense too
  seconds = std::min(seconds, 24.0 * 3600);
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000)));
}

std::string TrimBase(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::string InputText(const pipeline::AgentInput& input) {
  std::string text;
  for (const auto& part : input.content) {
    if (part.kind != domain::ContentPart::Kind::kText || part.text.empty()) continue;
    if (!text.empty()) text += '\n';
    text += part.text;
  }
  return text;
}

net::HttpRequest JsonPost(std::string url, const util::Json& body,
                          std::chrono::milliseconds timeout, bool event_stream) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = std::move(url);
  request.headers.emplace_back("Content-Type", "application/json");
  if (event_stream) request.headers.emplace_back("Accept", "text/event-stream");
  request.body = util::SerializeJson(body);
  request.timeouts.connect = std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(10));
  request.timeouts.total = timeout;
  request.timeouts.idle = timeout;
  request.max_response_bytes = 8 * 1024 * 1024;
  return request;
}

util::Error StatusError(std::string_view service, int status, std::string_view detail,
                        const std::string& secret) {
  std::string why(detail.substr(0, 300));
  util::Error error;
  switch (status) {
    case 401:
    case 403:
      error = {ErrorCode::kUpstreamAuth,
               fmt::format("{}: the API key was refused ({})", service, status)};
      break;
    case 404:
      error = {ErrorCode::kUpstreamNotFound, fmt::format("{}: not found: {}", service, why)};
      break;
    case 429:
      error = {ErrorCode::kUpstreamRateLimited, fmt::format("{}: rate limited: {}", service, why)};
      break;
    case 408:
    case 504:
      error = {ErrorCode::kUpstreamTimeout, fmt::format("{}: timed out: {}", service, why)};
      break;
    default:
      error = {ErrorCode::kUpstreamFailed, fmt::format("{}: HTTP {}: {}", service, status, why)};
      break;
  }
  error.message = Redact(std::move(error.message), secret);
  return error;
}

util::Error TransportError(std::string_view service, util::Error error, const std::string& secret) {
  error.message = Redact(fmt::format("{}: {}", service, error.message), secret);
  return error;
}

std::string StringField(const util::JsonObject& object, std::string_view key) {
  const auto* value = object.if_contains(key);
  return value && value->is_string() ? std::string(value->as_string()) : std::string();
}

std::int64_t IntField(const util::JsonObject& object, std::string_view key) {
  const auto* value = object.if_contains(key);
  if (!value) return 0;
  if (value->is_int64()) return value->as_int64();
  if (value->is_uint64()) return static_cast<std::int64_t>(value->as_uint64());
  if (value->is_double()) return static_cast<std::int64_t>(value->as_double());
  return 0;
}

const util::JsonObject* ObjectField(const util::JsonObject& object, std::string_view key) {
  const auto* value = object.if_contains(key);
  return value && value->is_object() ? &value->as_object() : nullptr;
}

}  // namespace sb::runners
