// The Lark adapter: the webhook route (URL verification, Encrypt Key, X-Lark-Signature,
// Verification Token, acknowledge then work), the long connection (endpoint, protobuf frames,
// ping, acknowledgements, reassembly, reconnects), redeliveries answered once, received images
// fetched, and sends through LarkApi.
#include "platforms/lark/lark_adapter.hpp"

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <mutex>
#include <utility>
#include <variant>

#include "domain/message_text.hpp"
#include "net/websocket.hpp"
#include "platforms/common/acknowledge.hpp"
#include "platforms/common/clock_waits.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/lark_crypto.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/lark/lark_api.hpp"
#include "platforms/lark/lark_codec.hpp"
#include "platforms/lark/lark_frame.hpp"
#include "platforms/lark/lark_stream.hpp"
#include "util/crypto.hpp"
#include "util/ids.hpp"

namespace sb::platforms::lark {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using common::ConfigString;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::size_t kMaxBodyBytes = 1024 * 1024;
constexpr std::size_t kRememberedEvents = 10'000;  // event ids; Lark retries for ~7 h
constexpr std::size_t kMaxImageBytes = 10 * 1024 * 1024;
constexpr int kMaxFrameComplaints = 10;  // logged per connection
constexpr std::string_view kMessageEvent = "im.message.receive_v1";

WebhookAnswer Answer(int status, std::string_view msg) {
  util::JsonObject body;
  body["code"] = status == 200 ? 0 : status;
  body["msg"] = msg;
  return {status, "application/json", util::SerializeJson(body)};
}

// One open long connection, shared by its read loop and its ping loop (same strand).
struct Link {
  std::shared_ptr<net::WebSocketConnection> conn;
  std::int32_t service_id = 0;
  ClientConfig config;
  FrameAssembler assembler;
  int complaints = 0;
};

struct Ended {
  bool cancelled = false;
  std::string why;
};

Ended Lost(std::string why) {
  Ended ended;
  ended.why = std::move(why);
  return ended;
}

Ended Cancelled() {
  Ended ended;
  ended.cancelled = true;
  return ended;
}

class Core : public std::enable_shared_from_this<Core> {
 public:
  explicit Core(AdapterContext context)
      : context_(std::move(context)),
        app_id_(ConfigString(context_.config, "app_id")),
        app_secret_(ConfigString(context_.config, "app_secret")),
        encrypt_key_(ConfigString(context_.config, "encrypt-key")),
        verification_token_(ConfigString(context_.config, "verification-token")),
        webhook_mode_(common::ConfigBool(context_.config, "enable-webhook", false)),
        stream_reply_(common::ConfigBool(context_.config, "enable-stream-reply", false)),
        group_(CoroutineGroup::Make(context_.executor)),
        api_(context_, app_id_, app_secret_,
             common::ConfigBaseUrl(context_.config, "api_base_url", kDefaultBase)),
        events_(kRememberedEvents) {}

  void Start() {
    if (app_id_.empty() || app_secret_.empty()) {
      context_.host->OnTrouble(
          "no app_id or app_secret configured: copy them from the app's "
          "Credentials page in the Lark developer console");
      return;
    }
    auto self = shared_from_this();
    if (webhook_mode_) {
      if (encrypt_key_.empty() && verification_token_.empty()) {
        Log(LogLevel::kWarning,
            "neither encrypt-key nor verification-token is set: webhook calls cannot be told "
            "from forgeries");
      }
      group_->Spawn([self]() -> asio::awaitable<void> {
        co_await asio::this_coro::throw_if_cancelled(false);
        if (co_await self->SignIn()) self->context_.host->OnConnected(self->BotOpenId());
      });
      return;
    }
    if (!context_.websockets) {
      context_.host->OnTrouble("this server has no WebSocket transport for Lark's long connection");
      return;
    }
    group_->Spawn([self]() { return self->Run(); });
  }

  void Stop(std::function<void()> stopped) {
    if (stopping_.exchange(true)) return;
    group_->Close(std::move(stopped));
  }

  void Abandon() {
    if (stopping_.exchange(true)) return;
    group_->Close(nullptr);
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = common::MakeSendOnce(std::move(done));
    if (!IsPlainId(reply_to_message_id)) reply_to_message_id.clear();
    auto shared = std::make_shared<const domain::OutgoingMessage>(std::move(message));
    auto self = shared_from_this();
    const bool started =
        !stopping_ && group_->Spawn([self, shared, reply = std::move(reply_to_message_id), once]() {
          return self->SendAll(shared, reply, once);
        });
    if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

  // With enable-stream-reply, replies to received messages are cards updated while written.
  std::shared_ptr<ReplyStream> BeginStream(domain::TargetType chat_type, std::string chat_id,
                                           std::string reply_to_message_id) {
    if (!stream_reply_ || stopping_) return nullptr;
    if (!IsPlainId(reply_to_message_id)) reply_to_message_id.clear();
    std::weak_ptr<Core> weak = weak_from_this();
    return MakeStream(shared_from_this(), group_, api_, chat_type, std::move(chat_id),
                      reply_to_message_id,
                      [weak](domain::OutgoingMessage message, std::string reply_to,
                             std::function<void(util::Result<domain::SendReceipt>)> done) {
                        auto self = weak.lock();
                        if (!self)
                          return done(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
                        self->Send(std::move(message), std::move(reply_to), std::move(done));
                      });
  }

  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    if (!webhook_mode_) {
      answer(Answer(404, "this bot uses the long connection (enable-webhook is off)"));
      return;
    }
    if (call.method != "POST") {
      answer(Answer(405, "use POST"));
      return;
    }
    if (call.body.size() > kMaxBodyBytes) {
      answer(Answer(413, "the body is too large"));
      return;
    }
    // The signature first: a forged call costs one SHA-256. Lark signs event deliveries when an
    // Encrypt Key is set; the URL verification call comes unsigned but encrypted, and only Lark
    // can encrypt with the key.
    const std::string_view signature = call.Header("x-lark-signature");
    if (!encrypt_key_.empty() && !signature.empty() &&
        !common::LarkVerifySignature(call.Header("x-lark-request-timestamp"),
                                     call.Header("x-lark-request-nonce"), encrypt_key_, call.body,
                                     signature)) {
      answer(Answer(401, "wrong X-Lark-Signature"));
      return;
    }
    auto envelope = DecodeEnvelope(call.body, encrypt_key_);
    if (!envelope) {
      if (envelope.error().code == ErrorCode::kUnauthenticated) {
        answer(Answer(401, envelope.error().message));
        return;
      }
      Log(LogLevel::kWarning, "refused a malformed Lark webhook call: " + envelope.error().message);
      answer(Answer(400, envelope.error().message));
      return;
    }
    if (!verification_token_.empty() &&
        !util::ConstantTimeEquals(envelope->token, verification_token_)) {
      answer(Answer(401, "wrong verification token"));
      return;
    }
    if (envelope->kind == Envelope::Kind::kChallenge) {
      util::JsonObject body;
      body["challenge"] = envelope->challenge;
      answer({200, "application/json", util::SerializeJson(body)});
      return;
    }
    const std::string id = envelope->event_id;
    if (!Take(*envelope)) {
      answer(Answer(200, "ok"));
      return;
    }
    if (stopping_) {
      events_.Forget(id);
      answer(Answer(503, "the bot is stopping"));
      return;
    }
    auto self = shared_from_this();
    auto work = [self, event = std::move(envelope->event)]() { return self->Deliver(event); };
    if (!common::AcknowledgeThenRun(*group_, std::move(work), answer, Answer(200, "ok"),
                                    Answer(503, "the bot is stopping"))) {
      events_.Forget(id);
    }
  }

 private:
  void Log(LogLevel level, std::string text) {
    context_.host->Log(level, api_.Scrub(std::move(text)));
  }
  void Trouble(const std::string& why) { context_.host->OnTrouble(api_.Scrub(why)); }

  std::string BotOpenId() {
    std::lock_guard lock(mu_);
    return bot_open_id_;
  }

  // Whether an event is to be handled: a message event seen for the first time.
  bool Take(const Envelope& envelope) {
    if (envelope.event_type != kMessageEvent) return false;
    return events_.FirstSighting(envelope.event_id);
  }

  // Reports `why` with the retry to come, then waits for it. False when cancelled.
  asio::awaitable<bool> Backoff(common::ReconnectBackoff& backoff, const std::string& why) {
    const util::Duration delay = backoff.NextDelay(context_.clock->Now());
    Trouble(fmt::format("{}; {}", why, backoff.Describe(delay)));
    co_return co_await common::Sleep(*context_.clock, delay);
  }

  // The bot's open_id from /bot/v3/info (what At elements name when the bot is mentioned),
  // retried with backoff. False when cancelled or the credentials were refused.
  asio::awaitable<bool> SignIn() {
    common::ReconnectBackoff backoff;
    for (;;) {
      auto info = co_await api_.GetBotInfo();
      if (info) {
        {
          std::lock_guard lock(mu_);
          bot_open_id_ = info->open_id;
        }
        Log(LogLevel::kInfo,
            fmt::format("signed in to Lark as {} ({})", info->app_name, info->open_id));
        co_return true;
      }
      if (info.error().code == ErrorCode::kCancelled) co_return false;
      if (info.error().final) {
        Trouble(info.error().message + "; fix app_id and app_secret and save the bot");
        co_await common::WaitUntilCancelled();
        co_return false;
      }
      if (!co_await Backoff(backoff, "cannot read the bot's identity: " + info.error().message)) {
        co_return false;
      }
    }
  }

  asio::awaitable<void> Deliver(util::JsonObject event) {
    auto decoded = DecodeMessageEvent(event);
    if (!decoded) {
      Log(LogLevel::kWarning, "skipped a malformed Lark message event: " + decoded.error().message);
      co_return;
    }
    if (!decoded->message) {
      if (decoded->skipped != "sent by an app") {
        Log(LogLevel::kInfo, "skipped a Lark message: " + decoded->skipped);
      }
      co_return;
    }
    domain::ReceivedMessage& message = *decoded->message;
    // Backwards, so erasing a failed image keeps the earlier indexes valid.
    for (auto it = decoded->images.rbegin(); it != decoded->images.rend(); ++it) {
      auto media = co_await api_.FetchResource(message.message_id, it->image_key, kMaxImageBytes);
      if (co_await common::IsCancelled()) co_return;
      auto& element = message.chain[it->element];
      if (media) {
        element.base64 = "data:" + media->mime + ";base64," + common::Base64Encode(media->bytes);
        continue;
      }
      Log(LogLevel::kWarning, fmt::format("left out an image of Lark message {}: {}",
                                          message.message_id, media.error().message));
      message.chain.erase(message.chain.begin() + static_cast<long>(it->element));
    }
    const bool has_content =
        std::any_of(message.chain.begin(), message.chain.end(), [](const auto& e) {
          return e.type != domain::ElementType::kSource && e.type != domain::ElementType::kQuote;
        });
    if (!has_content) co_return;
    // The event names the replied-to message (parent_id) only: its text is read from the API
    // (one bounded call; the message waits for it).
    for (auto& element : message.chain) {
      if (element.type != domain::ElementType::kQuote || element.id.empty()) continue;
      auto quoted = co_await api_.GetQuoted(element.id);
      if (co_await common::IsCancelled()) co_return;
      if (quoted) {
        element = domain::MakeQuote(std::move(element.id), std::move(quoted->text),
                                    std::move(quoted->sender_id));
      } else {
        Log(LogLevel::kInfo, fmt::format("the quoted Lark message could not be read ({}); the "
                                         "message goes on without its text",
                                         quoted.error().message));
      }
      break;
    }
    context_.host->OnMessage(std::move(message));
  }

  asio::awaitable<void> SendAll(std::shared_ptr<const domain::OutgoingMessage> message,
                                std::string reply_to, std::shared_ptr<common::SendOnce> once) {
    co_await asio::this_coro::throw_if_cancelled(false);
    domain::SendReceipt receipt;
    for (const OutgoingPart& part : EncodeOutgoing(*message)) {
      std::string content = part.content;
      if (part.upload_element) {
        const domain::MessageElement& image = message->chain[*part.upload_element];
        util::Result<std::string> bytes = std::string();
        if (!image.base64.empty()) {
          bytes = ImageBytes(image);
        } else {
          auto media = co_await api_.FetchUrl(image.url, kMaxImageBytes);
          if (media) {
            bytes = std::move(media->bytes);
          } else {
            bytes = util::Fail(ErrorCode::kUpstreamFailed,
                               "cannot fetch the image to send: " + media.error().message);
          }
        }
        if (!bytes) {
          (*once)(tl::unexpected(bytes.error()));
          co_return;
        }
        auto key = co_await api_.UploadImage(std::move(*bytes));
        if (!key) {
          (*once)(tl::unexpected(key.error()));
          co_return;
        }
        content = ImageContent(*key);
      }
      auto id = co_await api_.Send(message->target_type, message->target_id, reply_to,
                                   part.msg_type, content, util::NewUuid());
      if (!id) {
        (*once)(tl::unexpected(id.error()));
        co_return;
      }
      if (!receipt.message_id) receipt.message_id = *id;
    }
    (*once)(receipt);
  }

  // ---- long connection ----

  asio::awaitable<void> Run() {
    co_await asio::this_coro::throw_if_cancelled(false);
    if (!co_await SignIn()) co_return;
    common::ReconnectBackoff backoff;
    for (;;) {
      if (co_await common::IsCancelled()) co_return;
      auto endpoint = co_await api_.GetWsEndpoint();
      if (!endpoint) {
        if (endpoint.error().code == ErrorCode::kCancelled) co_return;
        if (endpoint.error().final) {
          Trouble(endpoint.error().message + "; fix app_id and app_secret and save the bot");
          co_await common::WaitUntilCancelled();
          co_return;
        }
        if (!co_await Backoff(backoff, endpoint.error().message)) co_return;
        continue;
      }
      net::WebSocketConnectRequest request;
      request.url = endpoint->url;
      request.limits.max_message_bytes = kMaxFrameBytes;
      auto conn = co_await context_.websockets->Connect(std::move(request));
      if (!conn) {
        if (conn.error().code == ErrorCode::kCancelled) co_return;
        if (!co_await Backoff(backoff,
                              "cannot open Lark's long connection: " + conn.error().message)) {
          co_return;
        }
        continue;
      }
      Link link;
      link.conn = *conn;
      link.service_id = endpoint->service_id;
      link.config = endpoint->config;
      backoff.Connected(context_.clock->Now());
      context_.host->OnConnected(BotOpenId());
      Log(LogLevel::kInfo, "connected to Lark's long connection");
      auto result = co_await (ReadLoop(link) || PingLoop(link));
      Ended ended =
          result.index() == 0 ? std::get<0>(std::move(result)) : std::get<1>(std::move(result));
      if (ended.cancelled) {
        co_await asio::this_coro::reset_cancellation_state();
        co_await link.conn->Close(1000, "the bot stopped");
        co_return;
      }
      link.conn->Abort();
      if (!co_await Backoff(backoff, ended.why)) co_return;
    }
  }

  void Complain(Link& link, std::string text) {
    if (++link.complaints <= kMaxFrameComplaints) Log(LogLevel::kWarning, std::move(text));
  }

  asio::awaitable<Ended> ReadLoop(Link& link) {
    for (;;) {
      auto message = co_await link.conn->Read();
      if (!message) {
        if (message.error().code == ErrorCode::kCancelled) co_return Cancelled();
        const net::WebSocketClose close = link.conn->close_info();
        co_return Lost(fmt::format("Lark's long connection was lost (close {}{}{})", close.code,
                                   close.reason.empty() ? "" : ": ", close.reason.substr(0, 100)));
      }
      if (!message->binary) {
        Complain(link, "skipped a text frame on Lark's long connection");
        continue;
      }
      auto frame = DecodeFrame(message->data);
      if (!frame) {
        Complain(link, "skipped a malformed long-connection frame: " + frame.error().message);
        continue;
      }
      if (frame->method == kMethodControl) {
        if (frame->Header("type") == "pong" && !frame->payload.empty()) {
          ApplyClientConfig(frame->payload, link.config);
        }
        continue;
      }
      if (frame->method != kMethodData) continue;
      const util::TimePoint started = context_.clock->Now();
      auto whole = link.assembler.Add(*frame, started);
      if (!whole) {
        Complain(link, "dropped a long-connection event: " + whole.error().message);
        continue;
      }
      if (!*whole) continue;  // more parts to come
      // Card callbacks are not taken; the SDKs leave them unanswered too.
      if (frame->Header("type") != "event") continue;
      const int code = TakeStreamEvent(**whole) ? 200 : 500;
      const auto elapsed =
          std::chrono::duration_cast<std::chrono::milliseconds>(context_.clock->Now() - started);
      auto wrote = co_await link.conn->Write(
          EncodeFrame(AckFrame(*frame, fmt::format(R"({{"code":{}}})", code), elapsed.count())),
          true);
      if (!wrote) co_return Lost("Lark's long connection failed while acknowledging");
    }
  }

  // An event payload from the long connection: handed to a coroutine of its own so that the
  // acknowledgement goes out at once. False when it could not be read.
  bool TakeStreamEvent(const std::string& payload) {
    auto envelope = DecodeEnvelope(payload, "");
    if (!envelope && envelope.error().code == ErrorCode::kUnauthenticated &&
        !encrypt_key_.empty()) {
      envelope = DecodeEnvelope(payload, encrypt_key_);
    }
    if (!envelope) {
      Log(LogLevel::kWarning,
          "skipped a malformed long-connection event: " + envelope.error().message);
      return false;
    }
    if (!Take(*envelope)) return true;
    auto self = shared_from_this();
    group_->Spawn([self, event = std::move(envelope->event)]() { return self->Deliver(event); });
    return true;
  }

  asio::awaitable<Ended> PingLoop(Link& link) {
    for (;;) {
      auto wrote = co_await link.conn->Write(EncodeFrame(PingFrame(link.service_id)), true);
      if (!wrote) co_return Lost("Lark's long connection failed while pinging");
      const util::Duration interval = std::chrono::seconds(link.config.ping_interval_s);
      if (!co_await common::Sleep(*context_.clock, interval)) co_return Cancelled();
    }
  }

  const AdapterContext context_;
  const std::string app_id_;
  const std::string app_secret_;
  const std::string encrypt_key_;
  const std::string verification_token_;
  const bool webhook_mode_;
  const bool stream_reply_;  // replies shown as a card updated while written
  const std::shared_ptr<CoroutineGroup> group_;
  LarkApi api_;
  std::atomic<bool> stopping_{false};
  common::RecentIds events_;

  std::mutex mu_;
  std::string bot_open_id_;  // guarded by mu_; from /bot/v3/info
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeLarkAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, lark::CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::lark
