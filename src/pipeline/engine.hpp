// The pipeline engine: runs one incoming message through a pipeline's stages in LangBot's order
// (group respond rules, access control, ignore rules, incoming content filter, rate limit, then
// built-in commands or the runner, then output shaping) and reports what to send and log. Pure
// orchestration over ports: no I/O of its own, never sleeps.
//   PipelineEngine engine(runners, memory, limiter, ban_words, random, clock);
//   engine.Process(pipeline_id, std::move(query), [](EngineOutcome o) { runtime.Send(o); });
//   // kDeferred: wait until o.wait_until, then engine.Resume(o.deferred, done)
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "domain/bot_log.hpp"
#include "domain/conversation.hpp"
#include "domain/message.hpp"
#include "domain/plugin_hooks.hpp"
#include "pipeline/command.hpp"
#include "pipeline/content_filter.hpp"
#include "pipeline/local_agent_runner.hpp"
#include "pipeline/query.hpp"
#include "pipeline/rate_limiter.hpp"
#include "pipeline/trigger_rules.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace sb::pipeline {

// A runner (`ai.runner.runner`) as the engine sees it. Same contract as LocalAgentRunner::Run:
// called from a thread that may block; `done` exactly once, on any thread, must not block.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual void Run(const util::JsonObject& pipeline_config, AgentInput input,
                   std::function<void(const domain::ChatDelta&)> on_delta,
                   std::function<void(util::Result<AgentReply>)> done) = 0;
  // `!reset`: forget what the runner keeps of this conversation outside the conversation memory
  // (an external service's conversation id). Non-blocking.
  virtual void Forget(const domain::ConversationKey& key) { (void)key; }
};

// Adapts the concrete local-agent runner to the interface.
class LocalAgentRunnerAdapter final : public Runner {
 public:
  explicit LocalAgentRunnerAdapter(LocalAgentRunner& runner) : runner_(runner) {}
  void Run(const util::JsonObject& pipeline_config, AgentInput input,
           std::function<void(const domain::ChatDelta&)> on_delta,
           std::function<void(util::Result<AgentReply>)> done) override {
    runner_.Run(pipeline_config, std::move(input), std::move(on_delta), std::move(done));
  }

 private:
  LocalAgentRunner& runner_;
};

enum class OutcomeKind {
  kReplied,   // `reply` is to be sent (a command answer, the runner's reply, or a failure text)
  kIgnored,   // see `reason`; `reply` holds the notice for kBannedWords, nothing otherwise
  kDeferred,  // rate limit "wait": call Resume(deferred) at `wait_until`; its slot is reserved
};
const char* OutcomeKindName(OutcomeKind kind);

enum class IgnoreReason {
  kNone,
  kNotTriggered,   // group message matched no respond rule
  kAccessDenied,   // black/whitelist
  kIgnoreRule,     // trigger.ignore-rules
  kRateLimited,    // rate limit, strategy drop
  kBannedWords,    // incoming content filter; `reply` holds the notice to send
  kFailureHidden,  // the run failed and output.misc.exception-handling is "hide"
  kPluginHandled,  // a plugin prevented the default without a reply
};
const char* IgnoreReasonName(IgnoreReason reason);

struct EngineLogLine {
  domain::LogLevel level = domain::LogLevel::kInfo;
  std::string text;
};

// The state of a query held back by the rate limiter; opaque to the runtime.
struct DeferredRun;

struct EngineOutcome {
  OutcomeKind kind = OutcomeKind::kIgnored;
  IgnoreReason reason = IgnoreReason::kNone;
  domain::MessageChain reply;  // empty means nothing to send
  // kForward: a long reply the pipeline asks to send as one forward message (long-text strategy).
  domain::ReplyForm form = domain::ReplyForm::kNormal;
  std::string session_id;  // "person_<id>" / "group_<id>"
  // How the reply was made ("model <uuid>, 12 ms"), for the entry the caller logs once the reply
  // is delivered: one entry per reply rather than two.
  std::string made_by;
  std::vector<EngineLogLine> log;
  // The run failed (runner error or unavailable runner); `error` says why, for the log.
  bool failed = false;
  std::string error;
  // kDeferred only.
  util::TimePoint wait_until{};
  std::shared_ptr<const DeferredRun> deferred;
};

// The text `!help` answers with.
std::string HelpText();

// Thread-safe when its ports are (all the real ones are). Process/Resume are called from a thread
// that may block (a `!reset` clears memory synchronously through the repository); `done` runs
// exactly once, either on that thread or on the runner's completion thread.
class PipelineEngine {
 public:
  // `local_agent` serves `ai.runner.runner` "local-agent"; others are added with AddRunner, and
  // a runner nobody serves fails the run.
  PipelineEngine(Runner& local_agent, domain::ConversationRepository& memory, RateLimiter& limiter,
                 const BanWordFilter& ban_words, RandomSource& random, const util::Clock& clock);

  using Done = std::function<void(EngineOutcome)>;

  // Serves `ai.runner.runner` == `name` with `runner` (dify-service-api, n8n-service-api, ...).
  // Call before the first Process; the runner outlives the engine.
  void AddRunner(std::string name, Runner& runner);

  // Plugins: commands the built-ins do not know go to them, and every other message is offered
  // to them (message_received) before the runner. Call before the first Process; may be null.
  void SetPluginHooks(domain::PluginHooks* hooks) { plugins_ = hooks; }

  // Streams the runner's text pieces to `on_delta` (may be null) as they come, for adapters that
  // show a reply while it is written; the outcome still carries the whole shaped reply.
  using OnDelta = std::function<void(const domain::ChatDelta&)>;
  // Interim messages sent while the reply is written, before it (output.misc.
  // track-function-calls: "Call <tools>..." each time the model calls tools); may be null.
  using OnNotice = std::function<void(domain::MessageChain)>;

  void Process(const util::PipelineId& pipeline, Query query, Done done, OnDelta on_delta = nullptr,
               OnNotice on_notice = nullptr);
  // Continues a kDeferred outcome after the rate limiter (the slot is already taken).
  void Resume(std::shared_ptr<const DeferredRun> deferred, Done done, OnDelta on_delta = nullptr,
              OnNotice on_notice = nullptr);

 private:
  struct Run;
  void Dispatch(std::shared_ptr<Run> run);
  void RunCommand(std::shared_ptr<Run> run);
  void RunPluginCommand(std::shared_ptr<Run> run, const Command& command);
  void OfferToPlugins(std::shared_ptr<Run> run);
  void ReplyWith(std::shared_ptr<Run> run, std::string text);
  void RunRunner(std::shared_ptr<Run> run);
  void Finish(std::shared_ptr<Run> run, util::Result<AgentReply> result);
  // Output rules on a successful reply.
  void Shape(std::shared_ptr<Run> run, AgentReply reply, std::int64_t elapsed_ms);
  void Log(Run& run, domain::LogLevel level, std::string text) const;

  Runner& local_agent_;
  std::map<std::string, Runner*, std::less<>> runners_;  // besides local-agent
  domain::ConversationRepository& memory_;
  RateLimiter& limiter_;
  const BanWordFilter& ban_words_;
  RandomSource& random_;
  const util::Clock& clock_;
  domain::PluginHooks* plugins_ = nullptr;
};

}  // namespace sb::pipeline
