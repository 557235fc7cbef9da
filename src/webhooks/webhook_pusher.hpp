// Pushes every message a running bot receives to the enabled outgoing webhooks, as LangBot does
// (`bot.person_message` / `bot.group_message`), signed with each webhook's secret, with a timeout
// and retries with backoff; a receiver that answers {"skip_pipeline": true} takes the message
// over. docs/webhooks.md is the receiver's side of it.
//   auto pusher = WebhookPusher::Make(deps, options);
//   runtime_deps.takeover = pusher.get();   // the runtime calls OnReceived per message
//   pusher->Stop();                         // at shutdown: no new pushes
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "domain/message_takeover.hpp"
#include "domain/webhook.hpp"
#include "util/clock.hpp"

namespace sb::net {
class HttpClient;
}

namespace sb::webhooks {

struct WebhookPusherOptions {
  std::chrono::milliseconds timeout{10'000};       // per attempt, the whole exchange
  int max_attempts = 4;                            // network errors, 5xx and 429 are retried
  std::chrono::milliseconds first_backoff{1'000};  // doubled per attempt, with jitter
  std::size_t max_pending = 1'000;       // pushes in flight over every webhook; more are dropped
  std::size_t max_body_bytes = 1 << 20;  // larger payloads go without inline image data
  std::size_t max_answer_bytes = 64 * 1024;
};

struct WebhookPusherDeps {
  boost::asio::any_io_executor executor;
  std::shared_ptr<net::HttpClient> http;
  // The enabled webhooks; must not block (WebhookService::Enabled).
  std::function<std::shared_ptr<const std::vector<domain::Webhook>>()> enabled;
  // How a push ended, after its last attempt; called on an I/O thread, must not block.
  std::function<void(std::int64_t id, bool ok, int http_status, std::string error)> record;
  const util::Clock* clock = nullptr;
};

// The signature of a push: "sha256=" + hex HMAC-SHA256 over "<timestamp>.<body>" with the secret.
std::string SignPush(const std::string& secret, const std::string& timestamp,
                     const std::string& body);

// Thread-safe.
class WebhookPusher final : public domain::MessageTakeoverListener {
 public:
  static std::shared_ptr<WebhookPusher> Make(WebhookPusherDeps deps, WebhookPusherOptions options);
  ~WebhookPusher() override;

  std::shared_ptr<domain::Takeover> OnReceived(const std::string& bot_uuid,
                                               const std::string& adapter,
                                               const domain::ReceivedMessage& message) override;

  // No push starts afterwards; those under way end with the I/O context.
  void Stop();
  // Pushes in flight, and pushes dropped because too many were (metrics, tests).
  std::size_t Pending() const;
  std::uint64_t Dropped() const;

 private:
  struct Impl;
  explicit WebhookPusher(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace sb::webhooks
