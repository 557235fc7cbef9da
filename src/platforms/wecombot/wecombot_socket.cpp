// The WeCom AI bot's long connection: connect, aibot_subscribe and its ack, a ping every 30 s
// (two unanswered ones mean a dead link), aibot_msg_callback / aibot_event_callback in, replies
// (aibot_respond_msg on the callback's req_id, a finished stream) and proactive aibot_send_msg
// out, each acknowledged; reconnects with backoff.
#include <fmt/format.h>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <utility>

#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/wecombot/wecombot_core.hpp"
#include "platforms/wecombot/wecombot_feedback.hpp"

namespace sb::platforms::wecombot {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using domain::LogLevel;
using util::ErrorCode;

namespace {

constexpr util::Duration kSubscribeTimeout = 10s;  // LangBot's wait for the subscription's ack
constexpr util::Duration kAckTimeout = 5s;         // WeCom acknowledges each frame within 5 s
constexpr util::Duration kTurnTimeout = 30s;       // the frames before ours on the same req_id
constexpr int kMaxMissedPings = 2;
constexpr std::size_t kMaxPendingFrames = 256;
constexpr std::size_t kMaxFrameBytes = 1 << 20;
constexpr std::size_t kRememberedReplies = 1024;
// A stream must be finished within 6 minutes of the callback (errcode 846608); a reply later
// than this goes out as a proactive message instead.
constexpr util::Duration kReplyWindow = 330s;

}  // namespace

std::shared_ptr<Link> Core::CurrentLink() {
  std::lock_guard lock(mu_);
  return link_;
}

void Core::RememberReplyTarget(const std::string& msgid, ReplyTarget target) {
  std::lock_guard lock(mu_);
  if (reply_targets_.insert_or_assign(msgid, std::move(target)).second) {
    reply_order_.push_back(msgid);
  }
  while (reply_order_.size() > kRememberedReplies) {
    reply_targets_.erase(reply_order_.front());
    reply_order_.pop_front();
  }
}

std::optional<ReplyTarget> Core::TakeReplyTarget(const std::string& msgid) {
  if (msgid.empty()) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = reply_targets_.find(msgid);
  if (it == reply_targets_.end() || it->second.used) return std::nullopt;
  if (Now() - it->second.received > kReplyWindow) return std::nullopt;
  it->second.used = true;
  return it->second;
}

asio::awaitable<void> Core::RunSocket() {
  co_await asio::this_coro::throw_if_cancelled(false);
  common::ReconnectBackoff backoff(
      common::ReconnectOptions{.initial = 1s, .max = 30s, .stable_after = 60s});
  for (;;) {
    net::WebSocketConnectRequest request;
    request.url = settings_.ws_url;
    request.limits.max_message_bytes = kMaxFrameBytes;
    // The application's ping carries the liveness check; the transport's own only backs it up.
    request.limits.idle_timeout = std::chrono::milliseconds(settings_.heartbeat * 3);
    auto conn = co_await context_.websockets->Connect(std::move(request));
    Ended ended;
    if (!conn) {
      if (conn.error().code == ErrorCode::kCancelled) co_return;
      ended.why = "cannot connect to the WeCom long connection: " + conn.error().message;
    } else {
      auto link = std::make_shared<Link>();
      link->conn = *conn;
      ended = co_await RunLink(link);
      EndLink(link);
      if (ended.connected) backoff.Connected(Now());
      if (ended.cancelled) {
        co_await asio::this_coro::reset_cancellation_state();
        co_await link->conn->Close(1000, "the bot stopped");
        co_return;
      }
      link->conn->Abort();
    }
    if (ended.fatal) {
      Trouble(ended.why);
      while (co_await Pause(std::chrono::hours(24))) {
      }
      co_return;
    }
    const util::Duration delay = backoff.NextDelay(Now());
    Trouble(fmt::format("{}; {}", ended.why, backoff.Describe(delay)));
    if (!co_await Pause(delay)) co_return;
  }
}

asio::awaitable<Core::Ended> Core::RunLink(std::shared_ptr<Link> link) {
  const std::string req_id = NewReqId("aibot_subscribe", NowMs());
  auto wrote =
      co_await link->conn->Write(EncodeSubscribe(req_id, settings_.bot_id, settings_.secret));
  if (!wrote) co_return Ended{.why = "the long connection closed before aibot_subscribe"};
  // Frames before the subscription's ack are not expected; they are read past.
  auto subscribed = [&]() -> asio::awaitable<Ended> {
    for (;;) {
      auto message = co_await link->conn->Read();
      if (!message) {
        if (message.error().code == ErrorCode::kCancelled)
          co_return Ended{.why = {}, .cancelled = true};
        co_return Ended{.why =
                            "the long connection closed before the subscription was "
                            "acknowledged"};
      }
      auto frame = DecodeFrame(message->data);
      // The SDK and LangBot take any ack whose req_id has the aibot_subscribe prefix.
      if (!frame || !frame->cmd.empty() || !frame->req_id.starts_with("aibot_subscribe")) continue;
      if (frame->errcode.value_or(0) != 0) {
        co_return Ended{.why = fmt::format("WeCom refused the subscription (aibot_subscribe): {}; "
                                           "check BotId and Secret, then save the bot",
                                           DescribeAck(*frame)),
                        .fatal = true};
      }
      co_return Ended{.why = {}, .connected = true};
    }
  };
  auto first = co_await (subscribed() || Pause(kSubscribeTimeout));
  if (first.index() == 1) {
    if (!std::get<1>(first)) co_return Ended{.why = {}, .cancelled = true};
    co_return Ended{.why = "WeCom did not acknowledge aibot_subscribe within 10 s"};
  }
  Ended result = std::get<0>(std::move(first));
  if (!result.connected) co_return result;
  {
    std::lock_guard lock(mu_);
    link_ = link;
  }
  context_.host->OnConnected(settings_.bot_id);
  Log(LogLevel::kInfo, "subscribed to the WeCom long connection as bot " + settings_.bot_id);
  auto loops = co_await (ReadLoop(link) || HeartbeatLoop(link));
  Ended ended = loops.index() == 0 ? std::get<0>(std::move(loops)) : std::get<1>(std::move(loops));
  ended.connected = true;
  co_return ended;
}

void Core::EndLink(const std::shared_ptr<Link>& link) {
  {
    std::lock_guard lock(mu_);
    if (link_ == link) link_.reset();
  }
  std::vector<std::shared_ptr<AckWait>> waiting;
  {
    std::lock_guard lock(link->mu);
    link->ended = true;
    for (auto& [req_id, queue] : link->acks) {
      for (auto& wait : queue) waiting.push_back(wait);
    }
  }
  // Frames still waiting fail at once instead of after their timeouts.
  for (auto& wait : waiting) {
    wait->turn.Notify();
    wait->acked.Notify();
  }
}

asio::awaitable<Core::Ended> Core::ReadLoop(std::shared_ptr<Link> link) {
  int complaints = 0;
  for (;;) {
    auto message = co_await link->conn->Read();
    if (!message) {
      if (message.error().code == ErrorCode::kCancelled)
        co_return Ended{.why = {}, .cancelled = true};
      const net::WebSocketClose close = link->conn->close_info();
      co_return Ended{
          .why = fmt::format("the WeCom long connection was lost (close code {})", close.code)};
    }
    auto frame = DecodeFrame(message->data);
    if (!frame) {
      if (++complaints <= 10) {
        Log(LogLevel::kWarning, "skipped a malformed frame: " + frame.error().message);
      }
      continue;
    }
    if (auto ended = OnFrame(link, std::move(*frame))) co_return std::move(*ended);
  }
}

std::optional<Core::Ended> Core::OnFrame(const std::shared_ptr<Link>& link, Frame frame) {
  if (frame.cmd == "aibot_msg_callback" || frame.cmd == "aibot_event_callback") {
    auto callback = DecodeCallback(frame.body, settings_.bot_id);
    if (!callback) {
      Log(LogLevel::kWarning, "skipped a malformed " + frame.cmd + ": " + callback.error().message);
      return std::nullopt;
    }
    if (callback->kind == CallbackKind::kEvent) {
      if (callback->event_type == "disconnected_event") {
        // Another connection subscribed with this bot; WeCom closes this one. Reconnecting would
        // take the bot back from it, and then that one would, in turn.
        return Ended{.why =
                         "WeCom closed the long connection because another one subscribed "
                         "with the same BotId (disconnected_event); save the bot to take it "
                         "back",
                     .fatal = true};
      }
      if (callback->event_type == kFeedbackEventType) ReportFeedback(frame.body);
      return std::nullopt;
    }
    if (callback->kind != CallbackKind::kMessage) return std::nullopt;
    if (!seen_.FirstSighting(callback->msgid)) return std::nullopt;
    if (!callback->message) {
      Log(LogLevel::kInfo,
          fmt::format("skipped WeCom message {}: {}", callback->msgid, callback->skipped));
      return std::nullopt;
    }
    RememberReplyTarget(callback->msgid, ReplyTarget{.req_id = frame.req_id,
                                                     .stream_id = NewReqId("stream", NowMs()),
                                                     .received = Now()});
    auto self = shared_from_this();
    const std::string msgid = callback->msgid;
    if (!group_->Spawn(
            [self, cb = std::move(*callback)]() mutable { return self->Deliver(std::move(cb)); })) {
      seen_.Forget(msgid);
    }
    return std::nullopt;
  }
  if (!frame.cmd.empty()) return std::nullopt;  // a command this adapter does not take
  if (frame.req_id.starts_with("ping")) {
    link->missed_pings = 0;
    return std::nullopt;
  }
  std::shared_ptr<AckWait> wait;
  {
    std::lock_guard lock(link->mu);
    auto it = link->acks.find(frame.req_id);
    if (it != link->acks.end() && !it->second.empty()) wait = it->second.front();
  }
  if (wait && !wait->acked.notified()) {
    wait->ack = std::move(frame);
    wait->acked.Notify();
  }
  return std::nullopt;
}

asio::awaitable<Core::Ended> Core::HeartbeatLoop(std::shared_ptr<Link> link) {
  for (;;) {
    if (!co_await Pause(settings_.heartbeat)) co_return Ended{.why = {}, .cancelled = true};
    if (link->missed_pings >= kMaxMissedPings) {
      co_return Ended{.why = fmt::format("WeCom did not answer {} pings in a row (dead link)",
                                         kMaxMissedPings)};
    }
    ++link->missed_pings;
    auto wrote = co_await link->conn->Write(EncodePing(NewReqId("ping", NowMs())));
    if (!wrote) co_return Ended{.why = "the WeCom long connection failed while pinging"};
  }
}

asio::awaitable<util::Result<Frame>> Core::Command(std::shared_ptr<Link> link, std::string cmd,
                                                   std::string req_id, util::JsonObject body) {
  auto wait = std::make_shared<AckWait>();
  bool first = false;
  {
    std::lock_guard lock(link->mu);
    if (link->ended) {
      co_return util::Fail(ErrorCode::kUpstreamUnreachable,
                           "the WeCom long connection was lost; reconnecting");
    }
    if (link->pending >= kMaxPendingFrames) {
      co_return util::Fail(ErrorCode::kUnavailable, "too many WeCom frames await their ack");
    }
    auto& queue = link->acks[req_id];
    queue.push_back(wait);
    first = queue.size() == 1;
    ++link->pending;
  }
  auto leave = [&] {
    std::shared_ptr<AckWait> next;
    {
      std::lock_guard lock(link->mu);
      auto it = link->acks.find(req_id);
      if (it != link->acks.end()) {
        std::erase(it->second, wait);
        if (it->second.empty()) {
          link->acks.erase(it);
        } else {
          next = it->second.front();
        }
      }
      --link->pending;
    }
    if (next) next->turn.Notify();
  };
  if (!first && !co_await wait->turn.Wait(*context_.clock, kTurnTimeout)) {
    leave();
    co_return util::Fail(
        ErrorCode::kUpstreamTimeout,
        fmt::format("an earlier {} on the same message was not acknowledged", cmd));
  }
  auto wrote = co_await link->conn->Write(EncodeCommand(cmd, req_id, body));
  const bool acked = wrote && co_await wait->acked.Wait(*context_.clock, kAckTimeout);
  leave();
  if (acked && wait->ack) co_return std::move(*wait->ack);
  auto state = co_await asio::this_coro::cancellation_state;
  if (state.cancelled() != asio::cancellation_type::none) {
    co_return util::Fail(ErrorCode::kCancelled, "the bot stopped before sending");
  }
  if (!wrote || wait->acked.notified()) {
    co_return util::Fail(ErrorCode::kUpstreamUnreachable,
                         fmt::format("the WeCom long connection was lost during {}", cmd));
  }
  co_return util::Fail(ErrorCode::kUpstreamTimeout,
                       fmt::format("WeCom did not acknowledge {} within 5 s", cmd));
}

asio::awaitable<void> Core::SocketSend(domain::OutgoingMessage message,
                                       std::string reply_to_message_id,
                                       std::shared_ptr<common::SendOnce> once,
                                       std::optional<ReplyTarget> taken) {
  co_await asio::this_coro::throw_if_cancelled(false);
  const std::vector<std::string> pieces =
      SplitBytes(RenderMarkdown(message.chain), kMaxContentBytes);
  auto link = CurrentLink();
  if (!link) {
    (*once)(util::Fail(ErrorCode::kUpstreamUnreachable,
                       "the bot is not connected to WeCom (the long connection is down)"));
    co_return;
  }
  domain::SendReceipt receipt;
  std::size_t next = 0;
  if (auto target = taken ? taken : TakeReplyTarget(reply_to_message_id);
      target && !pieces.empty()) {
    // The reply: one finished stream on the callback's req_id, shown as the answer to it.
    // A reply sent whole sets its feedback id here (a streamed one did at its first frame).
    util::JsonObject body = StreamBody(target->stream_id, pieces[0], true);
    if (!taken)
      body = WithFeedback(std::move(body), FeedbackIdFor(target->stream_id, reply_to_message_id));
    auto ack = co_await Command(link, "aibot_respond_msg", target->req_id, std::move(body));
    if (!ack) {
      (*once)(tl::unexpected(ack.error()));
      co_return;
    }
    const std::int64_t code = ack->errcode.value_or(0);
    if (code == 0) {
      receipt.message_id = target->stream_id;
      next = 1;
    } else if (code == kErrInvalidReqId || code == kErrStreamExpired) {
      Log(LogLevel::kInfo, fmt::format("the reply window had closed ({}); sending the reply as "
                                       "a new message",
                                       DescribeAck(*ack)));
    } else {
      (*once)(util::Fail(ErrorCode::kUpstreamFailed,
                         "WeCom refused the reply (aibot_respond_msg): " + DescribeAck(*ack)));
      co_return;
    }
  }
  for (; next < pieces.size(); ++next) {
    const std::string req_id = NewReqId("aibot_send_msg", NowMs());
    auto ack = co_await Command(link, "aibot_send_msg", req_id,
                                SendMsgBody(message.target_id, pieces[next]));
    if (!ack) {
      (*once)(tl::unexpected(ack.error()));
      co_return;
    }
    if (ack->errcode.value_or(0) != 0) {
      (*once)(util::Fail(ErrorCode::kUpstreamFailed,
                         "WeCom refused the message (aibot_send_msg): " + DescribeAck(*ack)));
      co_return;
    }
    if (!receipt.message_id) receipt.message_id = req_id;
  }
  (*once)(receipt);
}

// A reply streamed on the long connection: the first update takes the message's reply target
// (the callback's req_id and a stream id), each update is an unfinished stream frame with the
// whole text so far, and the finish is SocketSend's finished frame on the same stream (then any
// further pieces as aibot_send_msg). Without a target (no callback, the window closed) updates
// fail and the reply goes out as Send would.
class SocketReplyStream final : public ReplyStream,
                                public std::enable_shared_from_this<SocketReplyStream> {
 public:
  SocketReplyStream(std::shared_ptr<Core> core, std::string msgid)
      : core_(std::move(core)), msgid_(std::move(msgid)) {}

  void Update(std::string text_so_far, std::function<void(util::Result<void>)> done) override {
    auto self = shared_from_this();
    auto once = std::make_shared<std::function<void(util::Result<void>)>>(std::move(done));
    const bool started =
        !core_->stopping_ && core_->group_->Spawn([self, text = std::move(text_so_far),
                                                   once]() -> asio::awaitable<void> {
          co_await asio::this_coro::throw_if_cancelled(false);
          (*once)(co_await self->Frame(std::move(text)));
        });
    if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

  void Finish(domain::OutgoingMessage message,
              std::function<void(util::Result<domain::SendReceipt>)> done) override {
    auto once = common::MakeSendOnce(std::move(done));
    std::optional<ReplyTarget> target;
    {
      std::lock_guard lock(mu_);
      target = target_;
    }
    auto core = core_;
    const bool started =
        !core->stopping_ &&
        core->group_->Spawn([core, message = std::move(message), msgid = msgid_, once, target]() {
          return core->SocketSend(message, msgid, once, target);
        });
    if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

  // A stream cannot be taken back; it is finished empty so WeCom stops showing it as written.
  void Abandon() override {
    std::optional<ReplyTarget> target;
    {
      std::lock_guard lock(mu_);
      target = target_;
    }
    if (!target) return;
    auto core = core_;
    core->group_->Spawn([core, target]() -> asio::awaitable<void> {
      co_await asio::this_coro::throw_if_cancelled(false);
      auto link = core->CurrentLink();
      if (!link) co_return;
      (void)co_await core->Command(link, "aibot_respond_msg", target->req_id,
                                   StreamBody(target->stream_id, "", true));
    });
  }

 private:
  asio::awaitable<util::Result<void>> Frame(std::string text) {
    std::optional<ReplyTarget> target;
    bool first = false;
    {
      std::lock_guard lock(mu_);
      if (!target_) target_ = core_->TakeReplyTarget(msgid_);
      target = target_;
      first = target && !feedback_set_;
    }
    if (!target) {
      co_return util::Fail(ErrorCode::kUnavailable,
                           "no open reply stream for the message (its window closed)");
    }
    auto link = core_->CurrentLink();
    if (!link) {
      co_return util::Fail(ErrorCode::kUpstreamUnreachable,
                           "the bot is not connected to WeCom (the long connection is down)");
    }
    auto pieces = SplitBytes(text, kMaxContentBytes);
    if (pieces.empty()) co_return util::Ok();
    // The feedback id goes in the first frame only (the SDK's replyStream: "仅首次回复时设置").
    util::JsonObject body = StreamBody(target->stream_id, pieces[0], false);
    if (first) body = WithFeedback(std::move(body), FeedbackIdFor(target->stream_id, msgid_));
    auto ack = co_await core_->Command(link, "aibot_respond_msg", target->req_id, std::move(body));
    if (!ack) co_return tl::unexpected(ack.error());
    if (first && ack->errcode.value_or(0) == 0) {
      std::lock_guard lock(mu_);
      feedback_set_ = true;
    }
    if (ack->errcode.value_or(0) != 0) {
      co_return util::Fail(ErrorCode::kUpstreamFailed,
                           "WeCom refused the stream frame: " + DescribeAck(*ack));
    }
    co_return util::Ok();
  }

  const std::shared_ptr<Core> core_;
  const std::string msgid_;
  std::mutex mu_;
  std::optional<ReplyTarget> target_;  // guarded by mu_; taken at the first update
  bool feedback_set_ = false;          // guarded by mu_; a frame with the feedback id went out
};

std::shared_ptr<ReplyStream> Core::BeginStream(domain::TargetType, std::string,
                                               std::string reply_to_message_id) {
  if (!settings_.stream_reply || stopping_ || reply_to_message_id.empty()) return nullptr;
  if (settings_.webhook) return WebhookStream(std::move(reply_to_message_id));
  return std::make_shared<SocketReplyStream>(shared_from_this(), std::move(reply_to_message_id));
}

}  // namespace sb::platforms::wecombot
