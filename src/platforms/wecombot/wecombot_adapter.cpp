// The WeCom AI bot adapter's lifecycle, Send and message delivery (images downloaded and
// decrypted first); the transports are in wecombot_socket.cpp and wecombot_webhook.cpp.
#include "platforms/wecombot/wecombot_adapter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/this_coro.hpp>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/wechat_crypto.hpp"
#include "platforms/wecombot/wecombot_core.hpp"
#include "platforms/wecombot/wecombot_feedback.hpp"

namespace sb::platforms::wecombot {

namespace asio = boost::asio;
using domain::LogLevel;
using util::ErrorCode;

namespace {

constexpr std::string_view kDefaultWsUrl = "wss://openws.work.weixin.qq.com";
constexpr std::size_t kRememberedMessages = 10'000;
// Images users send are downloaded so the model can see them; bigger ones are left out.
constexpr std::size_t kMaxImageBytes = 10 * 1024 * 1024;

util::Duration Millis(const util::JsonObject& config, std::string_view key, std::int64_t fallback,
                      std::int64_t min, std::int64_t max) {
  return util::Duration(std::clamp(common::ConfigInt(config, key, fallback), min, max));
}

}  // namespace

Settings ReadSettings(const util::JsonObject& config) {
  using common::ConfigString;
  Settings s;
  s.bot_id = ConfigString(config, "BotId");
  s.secret = ConfigString(config, "Secret");
  s.webhook = common::ConfigBool(config, "enable-webhook", false);
  s.token = ConfigString(config, "Token");
  s.encoding_aes_key = ConfigString(config, "EncodingAESKey");
  s.ws_url = ConfigString(config, "ws_url");
  if (s.ws_url.empty()) s.ws_url = kDefaultWsUrl;
  s.poll_timeout = Millis(config, "PullPollTimeoutMs", 500, 0, 4'000);
  // WeCom gives up on a stream after 6 minutes; finishing it later would only show its fallback.
  s.streams.max_lifetime = Millis(config, "PullStreamMaxLifetimeMs", 300'000, 1'000, 350'000);
  if (common::ConfigBool(config, "PullPendingPlaceholderEnabled", false)) {
    s.streams.placeholder = ConfigString(config, "PullPendingPlaceholder");
    s.streams.placeholder_delay =
        Millis(config, "PullPendingPlaceholderDelayMs", 3'000, 0, 300'000);
  }
  s.streams.max_content_bytes = kMaxContentBytes;
  s.stream_reply = common::ConfigBool(config, "enable-stream-reply", false);
  return s;
}

Core::Core(AdapterContext context)
    : context_(std::move(context)),
      settings_(ReadSettings(context_.config)),
      group_(CoroutineGroup::Make(context_.executor)),
      seen_(kRememberedMessages),
      streams_(settings_.streams) {
  if (auto key = common::WeChatAesKey(settings_.encoding_aes_key)) aes_key_ = std::move(*key);
}

void Core::Start() {
  if (settings_.bot_id.empty()) {
    Trouble("no BotId configured: copy the bot's id from the WeCom admin console");
    return;
  }
  if (settings_.webhook) {
    if (settings_.token.empty()) {
      Trouble("webhook mode needs the callback Token: every callback would be refused");
      return;
    }
    if (aes_key_.empty()) {
      Trouble("webhook mode needs EncodingAESKey (43 characters) to decrypt callbacks");
      return;
    }
    // Nothing to connect: WeCom calls the bot's URL, which is served already.
    context_.host->OnConnected(settings_.bot_id);
    Log(LogLevel::kInfo, "waiting for WeCom callbacks (webhook mode)");
    return;
  }
  if (settings_.secret.empty()) {
    Trouble("no Secret configured: the long connection (enable-webhook off) needs it");
    return;
  }
  if (!context_.websockets) {
    Trouble("this server has no WebSocket transport for the WeCom long connection");
    return;
  }
  auto self = shared_from_this();
  group_->Spawn([self]() { return self->RunSocket(); });
}

void Core::Stop(std::function<void()> stopped) {
  if (stopping_.exchange(true)) return;
  streams_.Clear();
  group_->Close(std::move(stopped));
}

void Core::Abandon() {
  if (stopping_.exchange(true)) return;
  streams_.Clear();
  group_->Close(nullptr);
}

void Core::Send(domain::OutgoingMessage message, std::string reply_to_message_id,
                std::function<void(util::Result<domain::SendReceipt>)> done) {
  auto once = common::MakeSendOnce(std::move(done));
  if (stopping_) {
    (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
    return;
  }
  if (settings_.webhook) {
    WebhookSend(std::move(message), reply_to_message_id, std::move(once));
    return;
  }
  auto self = shared_from_this();
  const bool started =
      group_->Spawn([self, message = std::move(message), reply_to = std::move(reply_to_message_id),
                     once]() { return self->SocketSend(message, reply_to, once); });
  if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
}

std::string Core::Scrub(std::string text) const {
  for (const std::string* secret :
       {&settings_.secret, &settings_.token, &settings_.encoding_aes_key}) {
    if (secret->size() < 4) continue;
    for (std::size_t at = text.find(*secret); at != std::string::npos;
         at = text.find(*secret, at)) {
      text.replace(at, secret->size(), "***");
    }
  }
  return text;
}

void Core::Log(LogLevel level, std::string text) {
  context_.host->Log(level, Scrub(std::move(text)));
}

void Core::Trouble(const std::string& why) { context_.host->OnTrouble(Scrub(why)); }

void Core::ReportFeedback(const util::Json& body) {
  auto feedback = DecodeFeedback(body);
  if (!feedback) {
    Log(LogLevel::kWarning, "skipped a malformed feedback_event: " + feedback.error().message);
    return;
  }
  Log(LogLevel::kInfo,
      fmt::format("feedback {} from {} on reply {}", static_cast<int>(feedback->type),
                  feedback->user_id, feedback->stream_id));
  context_.host->OnFeedback(std::move(*feedback));
}

std::int64_t Core::NowMs() const { return util::ToUnixMillis(Now()); }

asio::awaitable<bool> Core::Pause(util::Duration delay) {
  common::WakeSignal never;
  co_await never.Wait(*context_.clock, delay);
  auto state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() == asio::cancellation_type::none;
}

asio::awaitable<void> Core::Deliver(Callback callback) {
  co_await asio::this_coro::throw_if_cancelled(false);
  domain::ReceivedMessage& message = *callback.message;
  std::vector<std::size_t> failed;
  for (const PendingImage& image : callback.images) {
    if (!co_await FetchImage(message.chain[image.element], image)) failed.push_back(image.element);
    auto state = co_await asio::this_coro::cancellation_state;
    if (state.cancelled() != asio::cancellation_type::none) co_return;
  }
  // Erased from the back so the earlier indices stay right.
  for (auto it = failed.rbegin(); it != failed.rend(); ++it) {
    message.chain.erase(message.chain.begin() + static_cast<std::ptrdiff_t>(*it));
  }
  const bool has_content =
      std::any_of(message.chain.begin(), message.chain.end(), [](const domain::MessageElement& e) {
        return e.type == domain::ElementType::kPlain || e.type == domain::ElementType::kImage;
      });
  if (!has_content) {
    Log(LogLevel::kWarning,
        fmt::format("skipped WeCom message {}: none of its images could be fetched",
                    callback.msgid));
    co_return;
  }
  context_.host->OnMessage(std::move(message));
}

asio::awaitable<bool> Core::FetchImage(domain::MessageElement& element, const PendingImage& image) {
  const std::string_view key = image.aeskey.empty() ? settings_.encoding_aes_key : image.aeskey;
  std::string why;
  if (key.empty()) {
    why = "the callback has no aeskey and no EncodingAESKey is configured";
  } else if (!context_.http) {
    why = "this server has no HTTP client";
  } else {
    net::HttpRequest request;
    request.url = image.url;
    request.max_response_bytes = kMaxImageBytes;
    request.timeouts.total = std::chrono::seconds(30);
    auto response = co_await context_.http->Send(std::move(request));
    if (!response) {
      why = response.error().message;
    } else if (response->status != 200) {
      why = fmt::format("the download answered {}", response->status);
    } else if (auto plain = DecryptMedia(key, response->body); !plain) {
      why = plain.error().message;
    } else {
      element.base64 = ImageDataUrl(*plain);
      co_return true;
    }
  }
  Log(LogLevel::kWarning, "left out an image of a WeCom message: " + why);
  co_return false;
}

std::unique_ptr<PlatformAdapter> MakeWeComBotAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::wecombot
