// The OneBot adapter's actions: sends (ordinary and forward), the get_msg lookup of quoted
// messages, answers matched by echo, and the tick that enforces deadlines and heartbeats.
#include <fmt/format.h>

#include "platforms/onebot/onebot_core.hpp"

namespace sb::platforms::onebot::detail {

void Core::Send(domain::OutgoingMessage message, std::string /*reply_to_message_id*/,
                SendDone done) {
  auto once = common::MakeSendOnce(std::move(done));
  if (WantsForward(message)) {
    SendForward(std::move(message), std::move(once));
  } else {
    SendNormal(message, std::move(once));
  }
}

void Core::SendNormal(const domain::OutgoingMessage& message,
                      std::shared_ptr<common::SendOnce> once) {
  auto action = EncodeSend(message);
  if (!action) {
    (*once)(tl::unexpected(action.error()));
    return;
  }
  std::shared_ptr<Conn> conn;
  std::string echo;
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
      return;
    }
    conn = registry_.RouteFor(message);
    if (!conn) {
      (*once)(util::Fail(ErrorCode::kUpstreamUnreachable,
                         "no OneBot implementation is connected to this bot"));
      return;
    }
    echo = pending_.Add(
        Pending{once, {}, conn->serial, action->action, clock_.Now() + kActionTimeout});
  }
  if (!Enqueue(*conn, EncodeActionFrame(*action, echo))) {
    FailPending(echo, {ErrorCode::kUpstreamUnreachable,
                       "the OneBot connection closed before the message went out"});
  }
}

void Core::SendForward(domain::OutgoingMessage message, std::shared_ptr<common::SendOnce> once) {
  std::shared_ptr<Conn> conn;
  {
    std::lock_guard lock(mu_);
    if (!stopping_) conn = registry_.RouteFor(message);
  }
  util::Result<Action> action = conn ? EncodeForward(message, conn->SelfId(), kForwardNickname)
                                     : util::Fail(ErrorCode::kUpstreamUnreachable, "no route");
  if (!action) return SendNormal(message, std::move(once));
  std::weak_ptr<Core> weak = weak_from_this();
  auto forward_done =
      common::MakeSendOnce([weak, message, once](util::Result<domain::SendReceipt> sent) mutable {
        auto self = weak.lock();
        if (sent || sent.error().code != ErrorCode::kUpstreamFailed || !self) {
          return (*once)(std::move(sent));
        }
        self->host_.Log(LogLevel::kWarning,
                        fmt::format("the long reply could not go out as a forward message ({}); "
                                    "sent as ordinary messages",
                                    sent.error().message));
        self->SendNormal(message, std::move(once));
      });
  std::string echo;
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      (*forward_done)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
      return;
    }
    echo = pending_.Add(
        Pending{forward_done, {}, conn->serial, action->action, clock_.Now() + kActionTimeout});
  }
  if (!Enqueue(*conn, EncodeActionFrame(*action, echo))) {
    FailPending(echo, {ErrorCode::kUpstreamUnreachable,
                       "the OneBot connection closed before the message went out"});
  }
}

void Core::LookUpQuoteThenDeliver(const std::shared_ptr<Conn>& conn,
                                  domain::ReceivedMessage message) {
  auto quote = std::find_if(message.chain.begin(), message.chain.end(), [](const auto& e) {
    return e.type == domain::ElementType::kQuote && e.text.empty() && !e.id.empty();
  });
  if (quote == message.chain.end() || !conn->CanSend()) {
    host_.OnMessage(std::move(message));
    return;
  }
  const std::size_t index = static_cast<std::size_t>(quote - message.chain.begin());
  const Action action = EncodeGetMsg(quote->id);
  auto held = std::make_shared<domain::ReceivedMessage>(std::move(message));
  std::weak_ptr<Core> weak = weak_from_this();
  Pending pending{nullptr, {}, conn->serial, action.action, clock_.Now() + kLookupTimeout};
  pending.lookup = [weak, held, index](const ActionResponse* answer) {
    auto self = weak.lock();
    if (!self) return;
    domain::MessageElement& q = held->chain[index];
    if (answer != nullptr && answer->ok) {
      q = domain::MakeQuote(std::move(q.id), answer->message_text, answer->sender_id);
    } else {
      self->host_.Log(LogLevel::kInfo,
                      fmt::format("the quoted message {:.64} could not be read ({}); the message "
                                  "goes on without its text",
                                  q.id,
                                  answer == nullptr         ? "no answer"
                                  : answer->failure.empty() ? std::to_string(answer->retcode)
                                                            : answer->failure));
    }
    self->host_.OnMessage(std::move(*held));
  };
  std::string echo;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    echo = pending_.Add(std::move(pending));
  }
  if (!Enqueue(*conn, EncodeActionFrame(action, echo))) FailLookup(echo);
}

void Core::FailLookup(const std::string& echo) {
  std::optional<Pending> p;
  {
    std::lock_guard lock(mu_);
    p = pending_.Take(echo);
  }
  if (p && p->lookup) p->lookup(nullptr);
}

void Core::Answered(ActionResponse response) {
  std::optional<Pending> p;
  {
    std::lock_guard lock(mu_);
    p = pending_.Take(response.echo);
  }
  if (!p) return;  // late (timed out) or not ours
  if (p->lookup) return p->lookup(&response);
  if (!p->done) {
    auto conn = p->login_for.lock();
    if (!conn) return;
    if (response.ok && !response.user_id.empty()) {
      AdoptSelfId(conn, response.user_id);
    } else {
      host_.Log(LogLevel::kWarning,
                fmt::format("get_login_info failed on the connection from {}: {}", conn->remote,
                            response.failure.empty() ? std::to_string(response.retcode)
                                                     : response.failure));
    }
    return;
  }
  (*p->done)(SendOutcome(*p, response));
}

void Core::FailPending(const std::string& echo, util::Error error) {
  std::optional<Pending> p;
  {
    std::lock_guard lock(mu_);
    p = pending_.Take(echo);
  }
  if (p && p->done) (*p->done)(tl::unexpected(std::move(error)));
}

void Core::ScheduleTick() {
  std::weak_ptr<Core> weak = weak_from_this();
  auto timer = clock_.After(kTick, [weak] {
    auto self = weak.lock();
    if (!self) return;
    // Re-armed here, not at the end of Tick: the ticks then follow the clock (a simulated one
    // too), however late the spawned Tick runs.
    self->ScheduleTick();
    self->group_->Spawn([self]() -> asio::awaitable<void> {
      self->Tick();
      co_return;
    });
  });
  std::lock_guard lock(mu_);
  if (stopping_) {
    timer.Cancel();
    return;
  }
  tick_timer_ = timer;
}

void Core::Tick() {
  const util::TimePoint now = clock_.Now();
  std::vector<Pending> expired;
  std::vector<std::shared_ptr<Conn>> silent;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    expired = pending_.TakeExpired(now);
    silent = registry_.Silent(Millis(now));
  }
  for (Pending& p : expired) {
    if (p.lookup) {
      p.lookup(nullptr);
      continue;
    }
    const std::string why = fmt::format("OneBot did not answer {} within {} s", p.action,
                                        kActionTimeout.count() / 1000);
    if (p.done)
      (*p.done)(util::Fail(ErrorCode::kUpstreamTimeout, why));
    else
      host_.Log(LogLevel::kWarning, why);
  }
  for (auto& conn : silent) {
    const std::string self_id = conn->SelfId();
    host_.OnTrouble(
        fmt::format("no heartbeat from OneBot {} for over {} s; dropped the "
                    "connection and waiting for it to reconnect",
                    self_id.empty() ? conn->remote : self_id,
                    conn->heartbeat_ms.load() * kHeartbeatsMissed / 1000));
    if (!conn->dropping.exchange(true)) conn->ws->Abort();
  }
}

}  // namespace sb::platforms::onebot::detail
