#include "pipeline/message_driver.hpp"

#include <algorithm>
#include <utility>

#include "pipeline/message_aggregator.hpp"
#include "pipeline/query.hpp"
#include "pipeline/session_scheduler.hpp"

namespace sb::pipeline {

namespace {

std::string SessionOf(const domain::ReceivedMessage& message) {
  return SessionId(LauncherOf(message.chat_type), message.chat_id);
}

}  // namespace

// One message on its way through the pipeline.
struct MessageDriver::Run {
  std::shared_ptr<MessageOrigin> origin;
  domain::ReceivedMessage message;
  std::string session_id;
  std::string key;  // scope + "/" + session id: what the scheduler and aggregator key on
  std::shared_ptr<Turn> turn;
  std::shared_ptr<const PipelineSnapshot> pipeline;
  SessionScheduler::Finished finished;  // ends the session's turn; called exactly once
};

std::shared_ptr<MessageDriver> MessageDriver::Make(PipelineEngine& engine,
                                                   util::BlockingExecutor& blocking,
                                                   const util::Clock& clock, RandomSource& random,
                                                   DriverOptions options) {
  return std::shared_ptr<MessageDriver>(
      new MessageDriver(engine, blocking, clock, random, options));
}

MessageDriver::MessageDriver(PipelineEngine& engine, util::BlockingExecutor& blocking,
                             const util::Clock& clock, RandomSource& random, DriverOptions options)
    : engine_(engine),
      blocking_(blocking),
      clock_(clock),
      random_(random),
      scheduler_(std::make_unique<SessionScheduler>(
          options.max_in_flight, options.max_queued,
          [&blocking](std::function<void()> job) { blocking.Post(std::move(job)); })),
      aggregator_(MessageAggregator::Make(clock)) {}

MessageDriver::~MessageDriver() { aggregator_->Close(); }

void MessageDriver::Submit(std::shared_ptr<MessageOrigin> origin, domain::ReceivedMessage message) {
  if (closed_) return;
  auto pipeline = origin->CachedPipeline();
  if (!pipeline || !pipeline->driver.aggregate) {
    // Not read yet (right after a start or a change): the run reads it. Aggregation waits for
    // the next message, so that messages keep their order here.
    return Enqueue(std::move(origin), std::move(message));
  }
  const std::string key = origin->scope() + "/" + SessionOf(message);
  std::weak_ptr<MessageDriver> weak = weak_from_this();
  aggregator_->Add(key, std::move(message), pipeline->driver.aggregation_delay,
                   [weak, origin](domain::ReceivedMessage merged) {
                     if (auto self = weak.lock()) self->Enqueue(origin, std::move(merged));
                   });
}

void MessageDriver::Enqueue(std::shared_ptr<MessageOrigin> origin,
                            domain::ReceivedMessage message) {
  auto run = std::make_shared<Run>();
  run->session_id = SessionOf(message);
  run->key = origin->scope() + "/" + run->session_id;
  run->origin = std::move(origin);
  run->message = std::move(message);
  std::weak_ptr<MessageDriver> weak = weak_from_this();
  const bool taken = scheduler_->Submit(run->key, [weak, run](SessionScheduler::Finished finished) {
    run->finished = std::move(finished);
    // Without the driver nothing is left to finish for (its scheduler is gone too).
    if (auto self = weak.lock()) self->Start(run);
  });
  // Refused for load: the origin tells the sender, so the message is not silently lost.
  if (!taken) run->origin->Refused(run->message, run->session_id, /*busy=*/true);
}

void MessageDriver::Start(std::shared_ptr<Run> run) {
  run->turn = run->origin->Begin(run->message, run->session_id);
  if (!run->turn) {
    run->origin->Refused(run->message, run->session_id, /*busy=*/false);
    return run->finished();
  }
  if (run->turn->TakenOver()) return run->finished();
  auto pipeline = run->origin->LoadPipeline();
  if (!pipeline) {
    run->turn->Log(domain::LogLevel::kError,
                   "cannot read the bot's pipeline: " + pipeline.error().message);
    return run->finished();
  }
  run->pipeline = *pipeline;
  // The turn has taken what it needs of the message: its chain moves into the query (no copy
  // per message on the hot path).
  auto& msg = run->message;
  Query query = MakeQuery(run->origin->bot_id(), LauncherOf(msg.chat_type), msg.chat_id,
                          msg.sender_id, std::move(msg.chain), run->origin->account_id(),
                          run->pipeline->config, run->pipeline->stages);
  std::weak_ptr<MessageDriver> weak = weak_from_this();
  engine_.Process(
      run->pipeline->id, std::move(query),
      [weak, run](EngineOutcome outcome) {
        if (auto self = weak.lock()) self->OnOutcome(run, std::move(outcome));
      },
      run->turn->Stream(),
      [turn = run->turn](domain::MessageChain notice) { turn->Notify(std::move(notice)); });
}

void MessageDriver::OnOutcome(std::shared_ptr<Run> run, EngineOutcome outcome) {
  for (const auto& line : outcome.log) run->turn->Log(line.level, line.text);
  std::weak_ptr<MessageDriver> weak = weak_from_this();
  if (outcome.kind == OutcomeKind::kDeferred) {
    // Held by the rate limiter: the session's turn stays taken until the run resumes, but its
    // slot of the global limit is given back, so waiting sessions cannot starve other origins.
    scheduler_->Yield(run->key);
    const auto wait = std::chrono::duration_cast<util::Duration>(outcome.wait_until - clock_.Now());
    clock_.After(wait, [weak, run, deferred = std::move(outcome.deferred)]() mutable {
      auto self = weak.lock();
      if (!self) return;
      if (self->closed_ || !run->turn->Answering()) {
        run->turn->Log(domain::LogLevel::kInfo,
                       "the bot stopped: a rate-limited message was dropped");
        return run->finished();
      }
      self->blocking_.Post([weak, run, deferred = std::move(deferred)]() mutable {
        auto self = weak.lock();
        if (!self) return;
        self->engine_.Resume(
            std::move(deferred),
            [weak, run](EngineOutcome resumed) {
              if (auto self = weak.lock()) self->OnOutcome(run, std::move(resumed));
            },
            run->turn->Stream(),
            [turn = run->turn](domain::MessageChain notice) { turn->Notify(std::move(notice)); });
      });
    });
    return;
  }
  if (outcome.reply.empty()) {
    run->turn->Ignored(outcome);
    return run->finished();
  }
  const auto delay = run->pipeline->driver.ForceDelay(random_.Next());
  if (delay.count() > 0) {
    scheduler_->Yield(run->key);  // a pause is not work: free the global slot
    clock_.After(delay, [weak, run, reply = std::move(outcome.reply),
                         made_by = std::move(outcome.made_by), form = outcome.form]() mutable {
      auto self = weak.lock();
      if (!self) return;
      if (self->closed_) {  // shutting down: nothing is sent any more
        run->turn->Log(domain::LogLevel::kInfo, "the bot stopped: a delayed reply was dropped");
        return run->finished();
      }
      self->Deliver(run, std::move(reply), std::move(made_by), form);
    });
    return;
  }
  Deliver(std::move(run), std::move(outcome.reply), std::move(outcome.made_by), outcome.form);
}

void MessageDriver::Deliver(std::shared_ptr<Run> run, domain::MessageChain reply,
                            std::string made_by, domain::ReplyForm form) {
  auto finished = run->finished;
  run->turn->Deliver(std::move(reply), std::move(made_by), form, std::move(finished));
}

void MessageDriver::Close() {
  closed_ = true;
  aggregator_->Close();
}

std::size_t MessageDriver::InFlight() const {
  return scheduler_->InFlight() + scheduler_->Queued();
}

}  // namespace sb::pipeline
