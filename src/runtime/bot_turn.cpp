// A running bot's messages on their way through the message driver: BotOrigin (where they come
// from, where refusals go) and BotTurn (one message, from its log entry to the reply's delivery).
#include <fmt/format.h>

#include "pipeline/query.hpp"
#include "runtime/bot_runtime_impl.hpp"
#include "runtime/streamed_reply.hpp"

namespace sb::runtime {

using util::ErrorCode;

namespace {

domain::MessageElement Plain(std::string text) {
  domain::MessageElement e;
  e.type = domain::ElementType::kPlain;
  e.text = std::move(text);
  return e;
}

// A message beside the reply (a busy notice, a tool-call notice): sent when the adapter can
// deliver it, never waited for.
void SendAside(Incarnation& target, domain::OutgoingMessage message, const std::string& reply_to,
               std::function<void(util::Result<domain::SendReceipt>)> sent) {
  if (!target.adapter().CheckDeliverable(message)) return;
  if (auto impl = target.impl(); impl && !impl->MaySend(target.bot().uuid)) return;
  target.adapter().Send(std::move(message), reply_to, std::move(sent));
}

// A running bot as the message driver sees it: where its messages come from and its replies go.
class BotOrigin final : public pipeline::MessageOrigin {
 public:
  BotOrigin(std::weak_ptr<BotRuntimeManager::Impl> impl, std::shared_ptr<Incarnation> inc,
            std::shared_ptr<domain::Takeover> takeover)
      : impl_(std::move(impl)), inc_(std::move(inc)), takeover_(std::move(takeover)) {}

  std::string scope() const override { return inc_->bot().uuid.str(); }
  std::string bot_id() const override { return inc_->bot().uuid.str(); }
  std::string account_id() const override { return inc_->account_id(); }
  std::shared_ptr<const pipeline::PipelineSnapshot> CachedPipeline() override {
    auto impl = impl_.lock();
    return impl ? impl->deps.pipelines->Cached(inc_->bot().use_pipeline_uuid) : nullptr;
  }
  util::Result<std::shared_ptr<const pipeline::PipelineSnapshot>> LoadPipeline() override {
    auto impl = impl_.lock();
    if (!impl) return util::Fail(ErrorCode::kUnavailable, "shutting down");
    return impl->deps.pipelines->Load(inc_->bot().use_pipeline_uuid);
  }
  void Refused(const domain::ReceivedMessage& message, const std::string& session_id,
               bool busy) override;
  std::shared_ptr<pipeline::Turn> Begin(const domain::ReceivedMessage& message,
                                        const std::string& session_id) override;

 private:
  std::weak_ptr<BotRuntimeManager::Impl> impl_;
  std::shared_ptr<Incarnation> inc_;
  std::shared_ptr<domain::Takeover> takeover_;  // null: nobody can take the message over
};

// One message of a running bot, from the log entry of its arrival to the reply's delivery.
class BotTurn final : public pipeline::Turn, public std::enable_shared_from_this<BotTurn> {
 public:
  BotTurn(std::weak_ptr<BotRuntimeManager::Impl> impl, std::shared_ptr<Incarnation> inc,
          const domain::ReceivedMessage& message, std::string session_id, std::string monitor_id,
          std::shared_ptr<domain::Takeover> takeover)
      : impl_(std::move(impl)),
        inc_(std::move(inc)),
        takeover_(std::move(takeover)),
        chat_type_(message.chat_type),
        chat_id_(message.chat_id),
        message_id_(message.message_id),
        session_id_(std::move(session_id)),
        monitor_id_(std::move(monitor_id)) {}

  void Log(LogLevel level, std::string text) override {
    if (auto impl = impl_.lock()) {
      impl->Log(inc_->bot().uuid, inc_->retention(), level, std::move(text), session_id_);
    }
  }

  bool Answering() override {
    auto impl = impl_.lock();
    return impl && impl->Live(inc_) != nullptr;
  }

  // The runner's text goes to the adapter while it is written when the adapter can stream and
  // the bot's config asks for it; otherwise nowhere, and the reply is sent whole.
  pipeline::PipelineEngine::OnDelta Stream() override {
    if (!streamed_) {
      auto impl = impl_.lock();
      if (!impl) return nullptr;
      auto live = impl->Live(inc_);
      if (!live || !impl->MaySend(live->bot().uuid)) return nullptr;
      auto stream = live->adapter().BeginStream(chat_type_, chat_id_, message_id_);
      if (!stream) return nullptr;
      std::weak_ptr<BotTurn> weak = weak_from_this();
      streamed_ =
          std::make_shared<StreamedReply>(std::move(stream), *impl->deps.clock,
                                          impl->options.stream_interval, [weak](std::string why) {
                                            if (auto self = weak.lock())
                                              self->Log(LogLevel::kWarning, std::move(why));
                                          });
      streamed_by_ = live;
    }
    return [reply = streamed_](const domain::ChatDelta& delta) { reply->Add(delta.content); };
  }

  void Ignored(const pipeline::EngineOutcome& outcome) override {
    if (streamed_ && streamed_->Started()) streamed_->Abandon();
    if (auto impl = impl_.lock()) {
      if (outcome.failed) {
        impl->monitor.Failed(inc_->bot(), monitor_id_, session_id_, "pipeline", outcome.error);
      } else {
        impl->monitor.Ignored(inc_->bot(), monitor_id_);
      }
    }
  }

  bool TakenOver() override { return takeover_ && takeover_->Taken(); }

  // Sent on its own, not waited for: the reply does not depend on it.
  void Notify(domain::MessageChain notice) override {
    auto impl = impl_.lock();
    if (!impl || TakenOver()) return;
    auto target = impl->Live(inc_);
    if (!target) return;
    std::string text = domain::DescribeChain(notice);
    SendAside(*target, {chat_type_, chat_id_, std::move(notice)}, message_id_,
              [self = shared_from_this(), text](util::Result<domain::SendReceipt> sent) {
                if (sent) {
                  self->Log(LogLevel::kInfo, "notice: " + text);
                } else {
                  self->Log(LogLevel::kWarning,
                            "a notice was not delivered: " + sent.error().message);
                }
              });
  }

  void Deliver(domain::MessageChain reply, std::string made_by, domain::ReplyForm form,
               std::function<void()> done) override {
    auto impl = impl_.lock();
    if (!impl) return done();
    if (TakenOver()) {
      Log(LogLevel::kInfo, "the reply was not sent: " + takeover_->TakenBy() +
                               " took the message over (skip_pipeline)");
      if (streamed_ && streamed_->Started()) streamed_->Abandon();
      return done();
    }
    domain::OutgoingMessage out{chat_type_, chat_id_, std::move(reply), form};
    // A restart while the model was thinking: the reply goes out through the new adapter.
    auto target = impl->Live(inc_);
    if (!target) {
      Log(LogLevel::kWarning,
          "the bot stopped before its reply could be sent: " + domain::DescribeChain(out.chain));
      return done();
    }
    inc_ = target;
    // The stream is finished by the adapter that began it; after a restart the reply is sent
    // whole through the new one (the old adapter has stopped).
    const bool streamed = streamed_ && streamed_->Started() && streamed_by_ == target;
    if (auto fenced = impl->MaySend(inc_->bot().uuid); !fenced) {
      Log(LogLevel::kWarning, "the reply was not sent: " + fenced.error().message);
      if (streamed) streamed_->Abandon();
      return done();
    }
    if (auto ok = inc_->adapter().CheckDeliverable(out); !ok) {
      Log(LogLevel::kError, "the reply cannot be delivered: " + ok.error().message);
      impl->monitor.Failed(inc_->bot(), monitor_id_, session_id_, "delivery", ok.error().message);
      if (streamed) streamed_->Abandon();
      return done();
    }
    std::string text = made_by.empty()
                           ? "reply: " + domain::DescribeChain(out.chain)
                           : "reply (" + made_by + "): " + domain::DescribeChain(out.chain);
    if (streamed) text.insert(5, " streamed");
    auto self = shared_from_this();
    auto sent_back = [self, text = std::move(text), reply_text = domain::DescribeChain(out.chain),
                      done = std::move(done)](util::Result<domain::SendReceipt> sent) {
      self->Monitor(sent, reply_text);
      if (sent) {
        self->Log(LogLevel::kInfo, text);
      } else {
        self->Log(LogLevel::kError, sent.error().code == ErrorCode::kCancelled
                                        ? "the bot stopped while its reply was being sent"
                                        : "the reply was not delivered: " + sent.error().message);
      }
      done();
    };
    if (streamed) {
      streamed_->Finish(std::move(out), std::move(sent_back));
    } else {
      inc_->adapter().Send(std::move(out), message_id_, std::move(sent_back));
    }
  }

 private:
  void Monitor(const util::Result<domain::SendReceipt>& sent, const std::string& reply_text) {
    auto impl = impl_.lock();
    if (!impl) return;
    if (sent) return impl->monitor.Replied(inc_->bot(), monitor_id_, session_id_, reply_text);
    impl->monitor.Failed(inc_->bot(), monitor_id_, session_id_, "delivery", sent.error().message);
  }

  std::weak_ptr<BotRuntimeManager::Impl> impl_;
  std::shared_ptr<Incarnation> inc_;            // replaced by its successor when the bot restarted
  std::shared_ptr<domain::Takeover> takeover_;  // null: nobody can take the message over
  std::shared_ptr<StreamedReply> streamed_;     // null: the reply is sent whole
  std::shared_ptr<Incarnation> streamed_by_;    // the incarnation whose adapter streams it
  const domain::TargetType chat_type_;
  const std::string chat_id_;
  const std::string message_id_;
  const std::string session_id_;
  const std::string monitor_id_;  // the message's monitoring record; empty when off
};

void BotOrigin::Refused(const domain::ReceivedMessage& message, const std::string& session_id,
                        bool busy) {
  auto impl = impl_.lock();
  if (!impl) return;
  impl->monitor.Refused(inc_->bot(), message, session_id, busy ? "queue full" : "bot stopped");
  if (!busy) {
    impl->Log(inc_->bot().uuid, inc_->retention(), LogLevel::kWarning,
              "a message arrived while the bot stopped and was not answered", session_id);
    return;
  }
  impl->Log(inc_->bot().uuid, inc_->retention(), LogLevel::kWarning,
            "too many messages waiting: one from " + session_id + " was dropped", session_id);
  // The sender is told, so the message is not silently lost.
  auto target = impl->Live(inc_);
  if (!target) return;
  SendAside(*target, {message.chat_type, message.chat_id, {Plain(impl->options.busy_notice)}},
            message.message_id, [](util::Result<domain::SendReceipt>) {});
}

std::shared_ptr<pipeline::Turn> BotOrigin::Begin(const domain::ReceivedMessage& message,
                                                 const std::string& session_id) {
  auto impl = impl_.lock();
  if (!impl) return nullptr;
  auto live = impl->Live(inc_);
  if (!live) return nullptr;
  const std::string who = message.sender_name.empty() ? message.sender_id : message.sender_name;
  impl->Log(live->bot().uuid, live->retention(), LogLevel::kInfo,
            fmt::format("message from {}: {}", who, domain::DescribeChain(message.chain)),
            session_id, domain::ImageUrlsOf(message.chain));
  if (takeover_ && impl->options.takeover_window.count() > 0) {
    takeover_->WaitTaken(impl->options.takeover_window);  // Begin runs on the blocking pool
  }
  if (takeover_ && takeover_->Taken()) {
    impl->Log(live->bot().uuid, live->retention(), LogLevel::kInfo,
              takeover_->TakenBy() + " took the message over (skip_pipeline): no pipeline run",
              session_id);
  }
  return std::make_shared<BotTurn>(impl_, live, message, session_id,
                                   impl->monitor.Received(live->bot(), message, session_id),
                                   takeover_);
}

}  // namespace

std::shared_ptr<pipeline::MessageOrigin> MakeBotOrigin(std::weak_ptr<BotRuntimeManager::Impl> impl,
                                                       std::shared_ptr<Incarnation> inc,
                                                       std::shared_ptr<domain::Takeover> takeover) {
  return std::make_shared<BotOrigin>(std::move(impl), std::move(inc), std::move(takeover));
}

}  // namespace sb::runtime
