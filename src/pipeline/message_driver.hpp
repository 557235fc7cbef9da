// The one road every received message takes, for running bots and the console's debug chat
// alike: aggregation of bursts, one run at a time per chat session under a global limit, the
// pipeline engine, rate-limit waits, the forced delay, and the hand-over of the reply to where
// the message came from. Time comes from the injected clock, so all of it is testable without
// sleeping.
//   auto driver = MessageDriver::Make(engine, blocking, clock, random, {.max_in_flight = 8});
//   driver->Submit(origin, std::move(received));   // origin: a running bot, a debug-chat room
//   ...
//   driver->Close();                               // at shutdown: held messages are dropped
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "domain/bot_log.hpp"
#include "domain/received_message.hpp"
#include "pipeline/engine.hpp"
#include "pipeline/pipeline_snapshot.hpp"
#include "util/blocking_executor.hpp"
#include "util/clock.hpp"

namespace sb::pipeline {

class MessageAggregator;
class SessionScheduler;

// One message's run as its origin sees it. Calls come from any thread, never concurrently for
// one turn, and must not block.
class Turn {
 public:
  virtual ~Turn() = default;
  // A line for the origin's log (the engine's notes, a dropped message).
  virtual void Log(domain::LogLevel level, std::string text) = 0;
  // Where the runner's text pieces go while the reply is written; null: nowhere.
  virtual PipelineEngine::OnDelta Stream() { return nullptr; }
  // An interim message sent at once, before the reply (the tools a model calls, when the
  // pipeline tracks them); fire and forget. By default it goes nowhere.
  virtual void Notify(domain::MessageChain notice) { (void)notice; }
  // False once the origin can no longer answer (the bot stopped): a held run is then dropped.
  virtual bool Answering() = 0;
  // The pipeline chose not to answer (outcome.reason says why).
  virtual void Ignored(const EngineOutcome& outcome) { (void)outcome; }
  // Someone outside took the message over (a webhook answered skip_pipeline): the run does not
  // start, or its reply is not sent. Asked when the run begins and before delivery; must not
  // block.
  virtual bool TakenOver() { return false; }
  // The reply, after any forced delay; `form` is how the pipeline asks it to be shown (a long
  // reply as a forward message). `done` runs exactly once, on any thread, when it went out or
  // failed; the session's next message waits for it.
  virtual void Deliver(domain::MessageChain reply, std::string made_by, domain::ReplyForm form,
                       std::function<void()> done) = 0;
};

// Where messages come from and replies go back to: a running bot, a debug-chat room. Thread-safe.
class MessageOrigin {
 public:
  virtual ~MessageOrigin() = default;
  // Keys the sessions: two origins never share one (the bot uuid, the room).
  virtual std::string scope() const = 0;
  // The bot id the engine sees in the query, and the bot's own account on the platform (what an
  // At must name to mention it).
  virtual std::string bot_id() const = 0;
  virtual std::string account_id() const = 0;
  // The pipeline as last read (never blocks; null when not read yet: the message then skips
  // aggregation), and reading it (may block; runs on the blocking pool).
  virtual std::shared_ptr<const PipelineSnapshot> CachedPipeline() = 0;
  virtual util::Result<std::shared_ptr<const PipelineSnapshot>> LoadPipeline() = 0;
  // The message was not taken: `busy` (too many waiting) or the origin stopped answering.
  virtual void Refused(const domain::ReceivedMessage& message, const std::string& session_id,
                       bool busy) = 0;
  // A run begins (on the blocking pool): the origin logs the message and makes its turn. Null
  // when the origin stopped meanwhile (the message is then refused).
  virtual std::shared_ptr<Turn> Begin(const domain::ReceivedMessage& message,
                                      const std::string& session_id) = 0;
};

struct DriverOptions {
  std::size_t max_in_flight = 8;  // runs at once over every origin
  std::size_t max_queued = 1000;  // waiting runs beyond that are refused as busy
};

class MessageDriver : public std::enable_shared_from_this<MessageDriver> {
 public:
  // The engine, the pool, the clock and the random source outlive the driver.
  static std::shared_ptr<MessageDriver> Make(PipelineEngine& engine,
                                             util::BlockingExecutor& blocking,
                                             const util::Clock& clock, RandomSource& random,
                                             DriverOptions options);
  ~MessageDriver();

  // Thread-safe; never blocks. The origin is kept until the message's run has ended.
  void Submit(std::shared_ptr<MessageOrigin> origin, domain::ReceivedMessage message);

  // No message is taken afterwards; held ones, and runs waiting for a rate-limit window or a
  // forced delay, are dropped (logged); runs under way finish.
  void Close();

  // Runs under way or waiting.
  std::size_t InFlight() const;

 private:
  struct Run;
  MessageDriver(PipelineEngine& engine, util::BlockingExecutor& blocking, const util::Clock& clock,
                RandomSource& random, DriverOptions options);
  void Enqueue(std::shared_ptr<MessageOrigin> origin, domain::ReceivedMessage message);
  void Start(std::shared_ptr<Run> run);
  void OnOutcome(std::shared_ptr<Run> run, EngineOutcome outcome);
  void Deliver(std::shared_ptr<Run> run, domain::MessageChain reply, std::string made_by,
               domain::ReplyForm form);

  PipelineEngine& engine_;
  util::BlockingExecutor& blocking_;
  const util::Clock& clock_;
  RandomSource& random_;
  std::unique_ptr<SessionScheduler> scheduler_;
  std::shared_ptr<MessageAggregator> aggregator_;
  std::atomic<bool> closed_{false};
};

}  // namespace sb::pipeline
