// What every chat-platform adapter is to the bot runtime: it turns the platform's traffic into
// ReceivedMessages for its host and delivers OutgoingMessages back. Conversion between the shared
// message model and the platform's own format happens only inside the adapter.
//   auto adapter = MakeTelegramAdapter(std::move(context));  // context.host receives messages
//   adapter->Start();
//   adapter->Send(msg, reply_to, [](Result<SendReceipt> r) { ... });
//   adapter->Stop([] { /* nothing of the adapter runs any more */ });
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/bot_log.hpp"
#include "domain/bot_runtime.hpp"
#include "domain/message.hpp"
#include "domain/platform_call.hpp"
#include "domain/platform_socket.hpp"
#include "domain/received_feedback.hpp"
#include "domain/received_message.hpp"
#include "util/error.hpp"

namespace sb::platforms {

using domain::ReceivedMessage;

// The runtime side of an adapter. Thread-safe; the calls never block and may come from any
// thread. No call is made after the adapter's Stop callback has run.
class AdapterHost {
 public:
  virtual ~AdapterHost() = default;
  // A message arrived. The host takes it over; the adapter need not wait for any answer.
  virtual void OnMessage(ReceivedMessage message) = 0;
  // The adapter is connected and able to receive. `bot_account_id` is the bot's own id on the
  // platform (what At elements name when the bot is mentioned); empty when the platform has none.
  virtual void OnConnected(std::string bot_account_id) = 0;
  // The connection failed or was lost; the adapter retries by itself (with backoff). `why` is
  // shown as the bot's runtime error and logged, so it must not hold a secret.
  virtual void OnTrouble(std::string why) = 0;
  // An entry for the bot's event log (a malformed update skipped, a reconnect, ...).
  virtual void Log(domain::LogLevel level, std::string text) = 0;
  // A user rated one of the bot's replies (only platforms with feedback buttons report it). The
  // host records it; the default ignores it, for hosts without monitoring.
  virtual void OnFeedback(domain::ReceivedFeedback feedback) { (void)feedback; }
  // False once this instance has lost the bot's lease (several instances on one database):
  // another instance runs the bot now, so the adapter must neither take nor confirm platform
  // updates any more (the new owner gets them). Never blocks.
  virtual bool MayAct() const { return true; }
};

// A platform's HTTP call to `/bots/{uuid}` or `/bots/{uuid}/{path}`, and the answer to it.
using WebhookCall = domain::PlatformCall;
using WebhookAnswer = domain::PlatformAnswer;

// One reply shown while it is being written (a card updated in place, a stream frame, an edited
// message). The runtime drives it: never two calls at once, each Update only after the previous
// one's `done`, at most a few a second, then exactly one of Finish or Abandon after the last
// Update's `done`. The object is dropped afterwards. An adapter's stream may be used from any
// thread and must not block.
class ReplyStream {
 public:
  virtual ~ReplyStream() = default;
  // The whole text written so far (not a piece). The first call shows the message. `done` runs
  // exactly once, on any thread; an error ends the updates (the runtime then only finishes).
  virtual void Update(std::string text_so_far, std::function<void(util::Result<void>)> done) = 0;
  // The final reply (already passed CheckDeliverable) replaces what was shown; the adapter sends
  // what the streamed message cannot hold (an image) as Send would, and sends it all as Send would
  // when no update got through. `done` as Send's.
  virtual void Finish(domain::OutgoingMessage message,
                      std::function<void(util::Result<domain::SendReceipt>)> done) = 0;
  // The pipeline withdrew the reply (it was filtered): what was shown is removed where the
  // platform allows it. Runs nothing back.
  virtual void Abandon() = 0;
};

// Thread-safe: Send and HandleWebhook may be called from any thread, concurrently, while the
// adapter runs.
class PlatformAdapter {
 public:
  virtual ~PlatformAdapter() = default;

  // Begins connecting (polling, a socket, a registration) without waiting for it. Called once.
  virtual void Start() = 0;

  // Closes every connection and stops every poller and timer. `stopped` runs exactly once, on
  // any thread, when nothing of the adapter runs any more: after it, the adapter makes no host
  // call and may be destroyed. Sends still in flight complete with kCancelled first. Idempotent.
  virtual void Stop(std::function<void()> stopped) = 0;

  // kInvalidArgument naming the first element this platform cannot carry ("message_chain[2]:
  // Voice needs a url"), or a target it cannot address. Pure; never blocks.
  virtual util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) const = 0;

  // Delivers `message` (already passed CheckDeliverable). `reply_to_message_id` is the id of
  // the received message this answers (empty for a message the bot starts), for platforms that
  // quote or thread replies. `done` runs exactly once, on any thread: kUpstreamFailed when the
  // platform refused (its reason, never a secret), kUpstreamTimeout / kUpstreamUnreachable when
  // it did not answer, kCancelled when the adapter stopped first.
  virtual void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
                    std::function<void(util::Result<domain::SendReceipt>)> done) = 0;

  // A stream for the reply to the received message `reply_to_message_id` in the chat
  // `chat_type`/`chat_id`, or null (the default) when this adapter cannot stream or the bot's
  // config does not ask for it (e.g. `enable-stream-reply` off): the reply then goes through Send.
  // Sends nothing by itself; never blocks.
  virtual std::shared_ptr<ReplyStream> BeginStream(domain::TargetType chat_type,
                                                   std::string chat_id,
                                                   std::string reply_to_message_id) {
    (void)chat_type;
    (void)chat_id;
    (void)reply_to_message_id;
    return nullptr;
  }

  // A platform's call to the bot's webhook URL. The adapter verifies the platform's signature
  // before anything else. `answer` runs exactly once, on any thread. Adapters that take no
  // webhook calls answer 404.
  virtual void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    (void)call;
    answer({404, "application/json", R"({"code":-1,"msg":"this adapter takes no webhook calls"})"});
  }

  // A WebSocket upgrade on the bot's URL (`call` is the upgrade request; the web page bot's
  // visitors). The handlers for what arrives, or the refusal, which the client gets as the HTTP
  // answer to its upgrade. The adapter's Stop closes every socket it took. May block briefly
  // (called on the blocking pool); `socket` may be kept.
  virtual util::Result<domain::PlatformSocketHandlers> AcceptSocket(
      WebhookCall call, std::shared_ptr<domain::PlatformSocket> socket) {
    (void)call;
    (void)socket;
    return util::Fail(util::ErrorCode::kNotFound, "this adapter takes no WebSocket connections");
  }
};

}  // namespace sb::platforms
