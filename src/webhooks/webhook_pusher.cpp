#include "webhooks/webhook_pusher.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <random>

#include "domain/message_json.hpp"
#include "net/http_client.hpp"
#include "util/crypto.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace sb::webhooks {
namespace asio = boost::asio;

namespace {

using util::Json;
using util::JsonArray;
using util::JsonObject;

// The chain in LangBot's element JSON; with `inline_data` false, images and files lose their
// base64 payloads (a receiver still sees their type and URL).
JsonArray ChainJson(const domain::MessageChain& chain, bool inline_data) {
  JsonArray out = domain::EncodeMessageChain(chain);
  if (!inline_data) {
    for (auto& element : out) {
      if (element.is_object()) element.get_object().erase("base64");
    }
  }
  return out;
}

std::string Payload(const std::string& bot_uuid, const std::string& adapter,
                    const domain::ReceivedMessage& m, std::int64_t unix_seconds, bool inline_data) {
  const bool group = m.chat_type == domain::TargetType::kGroup;
  JsonObject data{{"bot_uuid", bot_uuid},
                  {"adapter_name", adapter},
                  {"sender", JsonObject{{"id", m.sender_id}, {"name", m.sender_name}}},
                  {"message", ChainJson(m.chain, inline_data)},
                  {"timestamp", unix_seconds}};
  if (group) data["group"] = JsonObject{{"id", m.chat_id}, {"name", ""}};
  if (!inline_data) data["truncated"] = true;
  JsonObject event{{"uuid", util::NewUuid()},
                   {"event_type", group ? "bot.group_message" : "bot.person_message"},
                   {"data", std::move(data)}};
  return util::SerializeJson(Json(std::move(event)));
}

// LangBot's rule: only a JSON object whose skip_pipeline is exactly true takes the message.
bool AsksToSkip(const std::string& body) {
  auto parsed = util::ParseJson(body);
  if (!parsed || !parsed->is_object()) return false;
  const Json* skip = parsed->get_object().if_contains("skip_pipeline");
  return skip != nullptr && skip->is_bool() && skip->get_bool();
}

}  // namespace

std::string SignPush(const std::string& secret, const std::string& timestamp,
                     const std::string& body) {
  std::string signed_text = timestamp;
  signed_text += '.';
  signed_text += body;
  return "sha256=" + util::HexEncode(util::HmacSha256(secret, signed_text));
}

// Counts a message's first answers, so a run waiting for the verdict is released as soon as
// every webhook has answered once (retries go on in the background).
struct Verdict {
  std::shared_ptr<domain::Takeover> takeover;
  std::atomic<int> unanswered;
  void Answered() {
    if (unanswered.fetch_sub(1) == 1) takeover->Decline();  // no-op after a Take
  }
};

struct WebhookPusher::Impl : std::enable_shared_from_this<Impl> {
  WebhookPusherDeps deps;
  WebhookPusherOptions options;
  std::atomic<bool> stopped{false};
  std::atomic<std::size_t> pending{0};
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::int64_t> last_drop_warning{0};

  asio::awaitable<void> Push(domain::Webhook hook, std::string event_type, std::string body,
                             std::shared_ptr<Verdict> verdict) {
    auto self = shared_from_this();
    struct Release {
      Impl* impl;
      ~Release() { impl->pending.fetch_sub(1); }
    } release{this};
    const std::string delivery = util::NewUuid();
    bool answered = false;
    auto answer_once = [&] {
      if (!answered) verdict->Answered();
      answered = true;
    };
    std::minstd_rand jitter(std::random_device{}());
    int status = 0;
    std::string error;
    for (int attempt = 1; attempt <= options.max_attempts && !stopped; ++attempt) {
      const std::string timestamp = std::to_string(util::ToUnixMillis(deps.clock->Now()) / 1000);
      net::HttpRequest req;
      req.method = "POST";
      req.url = hook.url;
      req.body = body;
      req.timeouts.connect = std::min(options.timeout, req.timeouts.connect);
      req.timeouts.total = options.timeout;
      req.timeouts.idle = options.timeout;
      req.max_response_bytes = options.max_answer_bytes;
      req.headers = {{"Content-Type", "application/json"},
                     {"X-Switchboard-Event", event_type},
                     {"X-Switchboard-Delivery", delivery},
                     {"X-Switchboard-Attempt", std::to_string(attempt)},
                     {"X-Switchboard-Timestamp", timestamp},
                     {"X-Switchboard-Signature", SignPush(hook.secret, timestamp, body)}};
      auto res = co_await deps.http->Send(std::move(req));
      bool retry = false;
      if (!res) {
        status = 0;
        error = res.error().message;
        retry = res.error().code != util::ErrorCode::kInvalidArgument;
      } else if (res->status >= 200 && res->status < 300) {
        if (AsksToSkip(res->body)) verdict->takeover->Take("webhook " + hook.name);
        answer_once();
        deps.record(hook.id, true, res->status, "");
        co_return;
      } else {
        status = res->status;
        error = fmt::format("the receiver answered HTTP {}", res->status);
        retry = res->status >= 500 || res->status == 429;
      }
      answer_once();  // a failed first attempt does not hold the message up
      if (!retry || attempt == options.max_attempts) break;
      auto wait = options.first_backoff * (1 << (attempt - 1));
      wait += std::chrono::milliseconds(jitter() % (wait.count() / 4 + 1));
      asio::steady_timer timer(co_await asio::this_coro::executor, wait);
      auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      if (ec) break;
    }
    answer_once();
    spdlog::warn("webhook {} (id {}): push of a {} failed: {}", hook.name, hook.id, event_type,
                 error);
    deps.record(hook.id, false, status, error);
  }
};

std::shared_ptr<WebhookPusher> WebhookPusher::Make(WebhookPusherDeps deps,
                                                   WebhookPusherOptions options) {
  auto impl = std::make_shared<Impl>();
  impl->deps = std::move(deps);
  impl->options = options;
  return std::shared_ptr<WebhookPusher>(new WebhookPusher(std::move(impl)));
}

WebhookPusher::~WebhookPusher() { Stop(); }

std::shared_ptr<domain::Takeover> WebhookPusher::OnReceived(
    const std::string& bot_uuid, const std::string& adapter,
    const domain::ReceivedMessage& message) {
  if (impl_->stopped) return nullptr;
  auto hooks = impl_->deps.enabled();
  if (!hooks || hooks->empty()) return nullptr;
  const std::size_t n = hooks->size();
  if (impl_->pending.fetch_add(n) + n > impl_->options.max_pending) {
    impl_->pending.fetch_sub(n);
    impl_->dropped.fetch_add(n);
    // One warning a minute at most: a flood must not flood the log too.
    const std::int64_t now = util::ToUnixMillis(impl_->deps.clock->Now());
    std::int64_t last = impl_->last_drop_warning.load();
    if (now - last >= 60'000 && impl_->last_drop_warning.compare_exchange_strong(last, now)) {
      spdlog::warn("webhooks: {} pushes in flight; pushes of new messages are dropped",
                   impl_->options.max_pending);
    }
    return nullptr;
  }
  const std::int64_t now_s = util::ToUnixMillis(impl_->deps.clock->Now()) / 1000;
  std::string body = Payload(bot_uuid, adapter, message, now_s, true);
  if (body.size() > impl_->options.max_body_bytes) {
    body = Payload(bot_uuid, adapter, message, now_s, false);
  }
  const std::string event_type =
      message.chat_type == domain::TargetType::kGroup ? "bot.group_message" : "bot.person_message";
  auto verdict = std::make_shared<Verdict>();
  verdict->takeover = std::make_shared<domain::Takeover>();
  verdict->unanswered = static_cast<int>(n);
  for (const auto& hook : *hooks) {
    asio::co_spawn(impl_->deps.executor, impl_->Push(hook, event_type, body, verdict),
                   asio::detached);
  }
  return verdict->takeover;
}

void WebhookPusher::Stop() { impl_->stopped = true; }

std::size_t WebhookPusher::Pending() const { return impl_->pending.load(); }

std::uint64_t WebhookPusher::Dropped() const { return impl_->dropped.load(); }

}  // namespace sb::webhooks
