// The WeCom AI bot's webhook mode: the GET URL verification, POSTed `{"encrypt"}` callbacks with
// msg_signature checked first, and passive answers encrypted into the HTTP response. A message is
// answered with a new stream (finish false) and handed to the host; WeCom's refresh callbacks are
// answered from ReplyStreams, which the pipeline's Send fills.
#include <fmt/format.h>

#include <boost/asio/this_coro.hpp>
#include <utility>

#include "platforms/common/json_fields.hpp"
#include "platforms/common/wechat_crypto.hpp"
#include "platforms/wecombot/wecombot_core.hpp"
#include "platforms/wecombot/wecombot_feedback.hpp"
#include "util/call_once.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::wecombot {

namespace asio = boost::asio;
using domain::LogLevel;
using util::ErrorCode;

namespace {

constexpr std::size_t kMaxBodyBytes = 1024 * 1024;

WebhookAnswer Plain(int status, std::string text) {
  return {status, "text/plain; charset=utf-8", std::move(text)};
}

std::string_view QueryValue(const WebhookCall& call, std::string_view key) {
  for (const auto& [name, value] : call.query) {
    if (name == key) return value;
  }
  return {};
}

}  // namespace

void Core::HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
  if (!settings_.webhook) {
    answer(Plain(404, "this bot uses the WeCom long connection (enable-webhook is off)"));
    return;
  }
  if (aes_key_.empty() || settings_.token.empty()) {
    answer(Plain(503, "the bot's Token or EncodingAESKey is not configured"));
    return;
  }
  if (call.body.size() > kMaxBodyBytes) {
    answer(Plain(413, "the body is too large"));
    return;
  }
  if (call.method == "GET") {
    HandleVerification(call, answer);
  } else if (call.method == "POST") {
    HandleCallback(call, answer);
  } else {
    answer(Plain(405, "use GET or POST"));
  }
}

void Core::HandleVerification(const WebhookCall& call,
                              const std::function<void(WebhookAnswer)>& answer) {
  const std::string_view signature = QueryValue(call, "msg_signature");
  const std::string_view timestamp = QueryValue(call, "timestamp");
  const std::string_view nonce = QueryValue(call, "nonce");
  const std::string_view echostr = QueryValue(call, "echostr");
  if (signature.empty() || timestamp.empty() || nonce.empty() || echostr.empty()) {
    answer(Plain(400, "msg_signature, timestamp, nonce and echostr are required"));
    return;
  }
  if (!common::WeChatVerifySignature(settings_.token, timestamp, nonce, echostr, signature)) {
    Log(LogLevel::kWarning, "refused a URL verification with a wrong msg_signature");
    answer(Plain(401, "wrong msg_signature"));
    return;
  }
  auto plain = common::WeChatDecrypt(aes_key_, echostr, "");
  if (!plain) {
    Log(LogLevel::kWarning, "refused a URL verification: " + plain.error().message);
    answer(Plain(plain.error().code == ErrorCode::kUnauthenticated ? 401 : 400,
                 plain.error().message));
    return;
  }
  Log(LogLevel::kInfo, "answered WeCom's URL verification");
  answer(Plain(200, std::move(*plain)));
}

void Core::HandleCallback(const WebhookCall& call,
                          const std::function<void(WebhookAnswer)>& answer) {
  const std::string_view signature = QueryValue(call, "msg_signature");
  const std::string_view timestamp = QueryValue(call, "timestamp");
  const std::string_view nonce = QueryValue(call, "nonce");
  if (signature.empty() || timestamp.empty() || nonce.empty()) {
    answer(Plain(401, "msg_signature, timestamp and nonce are required"));
    return;
  }
  // The signature covers the `encrypt` value, so only that is read before it is checked.
  auto envelope = util::ParseJson(call.body);
  const boost::json::string* encrypt = envelope && envelope->is_object()
                                           ? common::StringField(envelope->get_object(), "encrypt")
                                           : nullptr;
  if (encrypt == nullptr || encrypt->empty()) {
    Log(LogLevel::kWarning, "refused a WeCom callback whose body is not {\"encrypt\": ...}");
    answer(Plain(400, "the body must be a JSON object with an encrypt string"));
    return;
  }
  const std::string_view encrypted(encrypt->data(), encrypt->size());
  if (!common::WeChatVerifySignature(settings_.token, timestamp, nonce, encrypted, signature)) {
    Log(LogLevel::kWarning, "refused a WeCom callback with a wrong msg_signature");
    answer(Plain(401, "wrong msg_signature"));
    return;
  }
  auto plain = common::WeChatDecrypt(aes_key_, encrypted, "");
  if (!plain) {
    Log(LogLevel::kWarning, "refused a WeCom callback: " + plain.error().message);
    answer(Plain(plain.error().code == ErrorCode::kUnauthenticated ? 401 : 400,
                 plain.error().message));
    return;
  }
  auto json = util::ParseJson(*plain);
  util::Result<Callback> callback = tl::unexpected(util::Error{});
  if (json) {
    callback = DecodeCallback(*json, settings_.bot_id);
  } else {
    callback = tl::unexpected(json.error());
  }
  if (!callback) {
    Log(LogLevel::kWarning, "refused a malformed WeCom callback: " + callback.error().message);
    answer(Plain(400, callback.error().message));
    return;
  }
  if (stopping_) {
    answer(Plain(503, "the bot is stopping"));
    return;
  }
  switch (callback->kind) {
    case CallbackKind::kStreamRefresh:
      HandleRefresh(callback->stream_id, std::string(nonce), answer);
      return;
    case CallbackKind::kEvent:
      // enter_chat, feedback_event, ...: nothing to say, as an encrypted empty object (LangBot).
      if (callback->event_type == kFeedbackEventType) ReportFeedback(*json);
      answer(Encrypted(util::JsonObject{}, nonce));
      return;
    case CallbackKind::kMessage:
      break;
  }
  if (!callback->message) {
    if (seen_.FirstSighting(callback->msgid)) {
      Log(LogLevel::kInfo,
          fmt::format("skipped WeCom message {}: {}", callback->msgid, callback->skipped));
    }
    answer(Encrypted(util::JsonObject{}, nonce));
    return;
  }
  auto opened = streams_.Open(callback->msgid, NewReqId("stream", NowMs()), Now());
  const std::string feedback_id = FeedbackIdFor(opened.stream_id, callback->msgid);
  // A redelivered message (WeCom retries when the answer was slow) gets its stream again and is
  // not handed on twice.
  if (opened.fresh && seen_.FirstSighting(callback->msgid)) {
    auto self = shared_from_this();
    if (!group_->Spawn(
            [self, cb = std::move(*callback)]() mutable { return self->Deliver(std::move(cb)); })) {
      answer(Plain(503, "the bot is stopping"));
      return;
    }
  }
  // The first answer sets the reply's feedback id: WeCom then offers the user like/dislike.
  answer(Encrypted(WithFeedback(StreamBody(opened.stream_id, "", false), feedback_id), nonce));
}

void Core::HandleRefresh(const std::string& stream_id, std::string nonce,
                         std::function<void(WebhookAnswer)> answer) {
  auto self = shared_from_this();
  auto reply = [self, stream_id, nonce](const std::function<void(WebhookAnswer)>& to) {
    StreamSnapshot snap = self->streams_.Take(stream_id, self->Now());
    // An unknown stream (expired, or from before a restart) is finished so WeCom stops asking.
    to(self->Encrypted(StreamBody(stream_id, snap.content, snap.finish || !snap.known), nonce));
  };
  if (settings_.poll_timeout.count() == 0 || streams_.Ready(stream_id, Now())) {
    reply(answer);
    return;
  }
  // Nothing new yet: wait a little (PullPollTimeoutMs) for the pipeline's reply, so WeCom's next
  // poll is not an empty one.
  auto once = std::make_shared<util::CallOnce<WebhookAnswer>>(
      std::move(answer), [] { return Plain(503, "the bot is stopping"); });
  auto signal = std::make_shared<common::WakeSignal>();
  streams_.OnChange(
      stream_id, [signal] { signal->Notify(); }, Now());
  group_->Spawn([self, signal, once, reply]() -> asio::awaitable<void> {
    co_await signal->Wait(*self->context_.clock, self->settings_.poll_timeout);
    auto state = co_await asio::this_coro::cancellation_state;
    if (state.cancelled() != asio::cancellation_type::none) co_return;  // the fallback answers
    reply([once](WebhookAnswer a) { (*once)(std::move(a)); });
  });
}

WebhookAnswer Core::Encrypted(const util::JsonObject& reply, std::string_view nonce) {
  unsigned char random[16];
  util::RandomBytes(random, sizeof random);
  const std::string timestamp = std::to_string(util::ToUnixSeconds(Now()));
  auto body = EncodeEnvelope(aes_key_, settings_.token, util::SerializeJson(reply), timestamp,
                             nonce, std::string_view(reinterpret_cast<char*>(random), 16));
  if (!body) return Plain(500, "the reply could not be encrypted");
  return {200, "application/json", std::move(*body)};
}

void Core::WebhookSend(domain::OutgoingMessage message, const std::string& reply_to_message_id,
                       std::shared_ptr<common::SendOnce> once) {
  if (reply_to_message_id.empty()) {
    (*once)(util::Fail(ErrorCode::kInvalidArgument,
                       "a WeCom AI bot in webhook mode can only answer messages (WeCom polls the "
                       "reply); send_message needs the long connection (enable-webhook off)"));
    return;
  }
  auto filled = streams_.Fill(reply_to_message_id, RenderMarkdown(message.chain), once, Now());
  if (!filled) (*once)(tl::unexpected(filled.error()));
}

namespace {

// Updates set the stream's text so far (WeCom's next refresh shows it); the finish is the
// adapter's Send (the stream's content and its finish); a withdrawn reply finishes it empty.
class PolledReplyStream final : public ReplyStream {
 public:
  PolledReplyStream(std::function<util::Result<void>(const std::string&)> progress,
                    std::function<void(domain::OutgoingMessage,
                                       std::function<void(util::Result<domain::SendReceipt>)>)>
                        finish,
                    std::function<void()> abandon)
      : progress_(std::move(progress)), finish_(std::move(finish)), abandon_(std::move(abandon)) {}

  void Update(std::string text_so_far, std::function<void(util::Result<void>)> done) override {
    done(progress_(text_so_far));
  }
  void Finish(domain::OutgoingMessage message,
              std::function<void(util::Result<domain::SendReceipt>)> done) override {
    finish_(std::move(message), std::move(done));
  }
  void Abandon() override { abandon_(); }

 private:
  const std::function<util::Result<void>(const std::string&)> progress_;
  const std::function<void(domain::OutgoingMessage,
                           std::function<void(util::Result<domain::SendReceipt>)>)>
      finish_;
  const std::function<void()> abandon_;
};

}  // namespace

std::shared_ptr<ReplyStream> Core::WebhookStream(std::string msgid) {
  std::weak_ptr<Core> weak = weak_from_this();
  return std::make_shared<PolledReplyStream>(
      [weak, msgid](const std::string& text) -> util::Result<void> {
        auto self = weak.lock();
        if (!self) return util::Fail(ErrorCode::kCancelled, "the bot is stopping");
        return self->streams_.Progress(msgid, text, self->Now());
      },
      [weak, msgid](domain::OutgoingMessage message,
                    std::function<void(util::Result<domain::SendReceipt>)> done) {
        auto self = weak.lock();
        if (!self) return done(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
        self->Send(std::move(message), msgid, std::move(done));
      },
      [weak, msgid]() {
        auto self = weak.lock();
        if (!self) return;
        (void)self->streams_.Fill(msgid, "", common::MakeSendOnce([](auto) {}), self->Now());
      });
}

}  // namespace sb::platforms::wecombot
