#include "pipeline/engine.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <string_view>
#include <utility>

#include "domain/message_text.hpp"
#include "pipeline/access_control.hpp"
#include "pipeline/command.hpp"
#include "pipeline/config_values.hpp"
#include "pipeline/ignore_rules.hpp"
#include "pipeline/output_rules.hpp"
#include "pipeline/stage_settings.hpp"

namespace sb::pipeline {

using domain::LogLevel;

const char* OutcomeKindName(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kReplied:
      return "replied";
    case OutcomeKind::kIgnored:
      return "ignored";
    case OutcomeKind::kDeferred:
      return "deferred";
  }
  return "ignored";
}

const char* IgnoreReasonName(IgnoreReason reason) {
  switch (reason) {
    case IgnoreReason::kNone:
      return "none";
    case IgnoreReason::kNotTriggered:
      return "not_triggered";
    case IgnoreReason::kAccessDenied:
      return "access_denied";
    case IgnoreReason::kIgnoreRule:
      return "ignore_rule";
    case IgnoreReason::kRateLimited:
      return "rate_limited";
    case IgnoreReason::kBannedWords:
      return "banned_words";
    case IgnoreReason::kFailureHidden:
      return "failure_hidden";
    case IgnoreReason::kPluginHandled:
      return "plugin_handled";
  }
  return "none";
}

std::string HelpText() {
  return "Commands:\n"
         "!help - show this list\n"
         "!reset - forget this conversation and start a new one";
}

// What a held-back query needs to continue after the rate limiter.
struct DeferredRun {
  util::PipelineId pipeline;
  Query query;
  std::string text;            // after the trigger stage (prefix stripped)
  domain::MessageChain chain;  // after the trigger stage (bot At removed)
};

struct PipelineEngine::Run {
  DeferredRun state;
  Done done;
  OnDelta on_delta;
  OnNotice on_notice;
  EngineOutcome outcome;
  util::TimePoint started{};
  std::atomic<bool> finished{false};

  const util::JsonObject& Config() const { return state.query.Config(); }
};

namespace {

constexpr const char* kLocalAgent = "local-agent";

domain::MessageElement Plain(std::string text) {
  domain::MessageElement element;
  element.type = domain::ElementType::kPlain;
  element.text = std::move(text);
  return element;
}

std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

// The user's message as the model sees it: the quoted messages' texts when the pipeline combines
// them, the text after the trigger stage (without the space a stripped prefix or mention leaves
// behind), then the images.
AgentInput MakeAgentInput(const DeferredRun& state) {
  AgentInput input;
  input.conversation = {state.pipeline, util::BotId::FromTrusted(state.query.bot_uuid),
                        state.query.SessionId()};
  // LangBot (preproc.py) adds each quoted message's text as a content part of its own where the
  // Quote stands in the chain; adapters put the Quote before the user's text.
  if (state.query.Settings().trigger.combine_quote) {
    for (std::string& quoted : domain::QuotedTextsOf(state.chain)) {
      input.content.push_back({domain::ContentPart::Kind::kText, std::move(quoted), {}});
    }
  }
  if (std::string_view text = TrimSpace(state.text); !text.empty()) {
    input.content.push_back({domain::ContentPart::Kind::kText, std::string(text), {}});
  }
  for (const auto& element : state.chain) {
    if (element.type != domain::ElementType::kImage) continue;
    std::string url = element.url;
    if (url.empty() && !element.base64.empty()) {
      url = element.base64.starts_with("data:") ? element.base64
                                                : "data:image/png;base64," + element.base64;
    }
    if (!url.empty()) input.content.push_back({domain::ContentPart::Kind::kImage, {}, url});
  }
  return input;
}

void AddWarnings(EngineOutcome& outcome, const std::vector<std::string>& warnings,
                 const char* stage) {
  for (const auto& w : warnings) {
    outcome.log.push_back({LogLevel::kWarning, std::string(stage) + ": " + w});
  }
}

}  // namespace

PipelineEngine::PipelineEngine(Runner& local_agent, domain::ConversationRepository& memory,
                               RateLimiter& limiter, const BanWordFilter& ban_words,
                               RandomSource& random, const util::Clock& clock)
    : local_agent_(local_agent),
      memory_(memory),
      limiter_(limiter),
      ban_words_(ban_words),
      random_(random),
      clock_(clock) {}

void PipelineEngine::AddRunner(std::string name, Runner& runner) {
  runners_[std::move(name)] = &runner;
}

void PipelineEngine::Log(Run& run, LogLevel level, std::string text) const {
  run.outcome.log.push_back({level, std::move(text)});
}

void PipelineEngine::Process(const util::PipelineId& pipeline, Query query, Done done,
                             OnDelta on_delta, OnNotice on_notice) {
  auto run = std::make_shared<Run>();
  run->done = std::move(done);
  run->on_delta = std::move(on_delta);
  run->on_notice = std::move(on_notice);
  run->started = clock_.Now();
  run->state.pipeline = pipeline;
  run->state.query = std::move(query);
  run->outcome.session_id = run->state.query.SessionId();
  const Query& q = run->state.query;
  const StageSettings& settings = q.Settings();
  EngineOutcome& outcome = run->outcome;

  auto ignore = [&](IgnoreReason reason, LogLevel level, std::string line) {
    outcome.kind = OutcomeKind::kIgnored;
    outcome.reason = reason;
    Log(*run, level, std::move(line));
    run->finished = true;
    run->done(std::move(outcome));
  };

  // 1. Group respond rules (private chats always pass); the stripped text replaces the message.
  TriggerDecision trigger = DecideTrigger(q, random_);
  AddWarnings(outcome, trigger.warnings, "respond rules");
  if (!trigger.respond) {
    return ignore(IgnoreReason::kNotTriggered, LogLevel::kDebug,
                  "not triggered: no group respond rule matched in " + outcome.session_id);
  }
  run->state.text = std::move(trigger.text);
  run->state.chain = std::move(trigger.chain);

  // 2. Access control.
  AccessDecision access = CheckAccess(settings.access, q.launcher_type, q.launcher_id);
  if (!access.allowed) {
    return ignore(IgnoreReason::kAccessDenied, LogLevel::kInfo,
                  "ignored by access control: " + access.session_id);
  }

  // 3. Ignore rules.
  IgnoreDecision ignored = CheckIgnore(settings.ignore, run->state.text);
  AddWarnings(outcome, ignored.warnings, "ignore rules");
  if (ignored.ignore) {
    return ignore(IgnoreReason::kIgnoreRule, LogLevel::kInfo,
                  "ignored by ignore rules in " + outcome.session_id);
  }

  // 4. Incoming content filter.
  FilterDecision in =
      FilterIncoming(settings.filter, ban_words_, run->state.chain, run->state.text);
  if (in.action == FilterAction::kBlock) {
    outcome.reply.push_back(Plain(in.user_notice));
    return ignore(IgnoreReason::kBannedWords, LogLevel::kInfo,
                  "message from " + outcome.session_id + " holds a ban word: refused");
  }

  // 5. Rate limit, one counter per pipeline and session.
  RateDecision rate =
      limiter_.Acquire(pipeline.str() + ":" + outcome.session_id, settings.rate_limit);
  if (rate.verdict == RateVerdict::kDrop) {
    return ignore(IgnoreReason::kRateLimited, LogLevel::kInfo,
                  "rate limit reached for " + outcome.session_id + ": message dropped");
  }
  if (rate.verdict == RateVerdict::kWait) {
    outcome.kind = OutcomeKind::kDeferred;
    outcome.wait_until = rate.retry_at;
    Log(*run, LogLevel::kInfo,
        "rate limit reached for " + outcome.session_id + ": waiting until " +
            util::FormatRfc3339(rate.retry_at));
    outcome.deferred = std::make_shared<const DeferredRun>(run->state);
    run->finished = true;
    run->done(std::move(outcome));
    return;
  }

  Dispatch(std::move(run));
}

void PipelineEngine::Resume(std::shared_ptr<const DeferredRun> deferred, Done done,
                            OnDelta on_delta, OnNotice on_notice) {
  auto run = std::make_shared<Run>();
  run->done = std::move(done);
  run->on_delta = std::move(on_delta);
  run->on_notice = std::move(on_notice);
  run->started = clock_.Now();
  if (!deferred) {
    run->outcome.kind = OutcomeKind::kIgnored;
    Log(*run, LogLevel::kError, "resume of a query that was not deferred");
    run->finished = true;
    run->done(std::move(run->outcome));
    return;
  }
  run->state = *deferred;
  run->outcome.session_id = run->state.query.SessionId();
  Dispatch(std::move(run));
}

void PipelineEngine::Dispatch(std::shared_ptr<Run> run) {
  // 6. Built-in commands ("!" prefix) never reach the model.
  if (ParseCommand(run->state.text).kind != CommandKind::kNotCommand) {
    RunCommand(std::move(run));
  } else if (plugins_) {
    OfferToPlugins(std::move(run));
  } else {
    RunRunner(std::move(run));
  }
}

namespace {

// What plugins are told about a message.
util::JsonObject PluginEvent(const Query& q, const util::PipelineId& pipeline,
                             const std::string& session_id) {
  return {{"bot_uuid", q.bot_uuid},
          {"pipeline_uuid", pipeline.str()},
          {"session_id", session_id},
          {"launcher_type", LauncherTypeName(q.launcher_type)},
          {"launcher_id", q.launcher_id},
          {"sender_id", q.sender_id},
          {"text", q.text}};
}

}  // namespace

void PipelineEngine::OfferToPlugins(std::shared_ptr<Run> run) {
  util::JsonObject event =
      PluginEvent(run->state.query, run->state.pipeline, run->outcome.session_id);
  event["event"] = "message_received";
  plugins_->MessageReceived(
      domain::PluginBinding::FromPipelineConfig(run->Config()), std::move(event),
      [this, run](std::optional<domain::PluginEventReply> handled) mutable {
        if (!handled) return RunRunner(std::move(run));
        if (!handled->reply.empty()) {
          Log(*run, LogLevel::kInfo,
              "plugin " + handled->plugin_id + " answered " + run->outcome.session_id);
          return ReplyWith(std::move(run), std::move(handled->reply));
        }
        EngineOutcome& outcome = run->outcome;
        outcome.kind = OutcomeKind::kIgnored;
        outcome.reason = IgnoreReason::kPluginHandled;
        Log(*run, LogLevel::kInfo,
            "plugin " + handled->plugin_id + " handled the message of " + outcome.session_id);
        run->finished = true;
        run->done(std::move(outcome));
      });
}

void PipelineEngine::ReplyWith(std::shared_ptr<Run> run, std::string text) {
  EngineOutcome& outcome = run->outcome;
  outcome.kind = OutcomeKind::kReplied;
  outcome.reply = ReplyPrefix(run->state.query);
  outcome.reply.push_back(Plain(std::move(text)));
  run->finished = true;
  run->done(std::move(outcome));
}

void PipelineEngine::RunPluginCommand(std::shared_ptr<Run> run, const Command& command) {
  util::JsonObject data =
      PluginEvent(run->state.query, run->state.pipeline, run->outcome.session_id);
  data["command"] = command.name;
  data["args"] = util::JsonArray(command.args.begin(), command.args.end());
  plugins_->Command(
      domain::PluginBinding::FromPipelineConfig(run->Config()), command.name, std::move(data),
      [this, run, name = command.name](std::optional<util::Result<std::string>> answer) mutable {
        if (!answer) {
          Log(*run, LogLevel::kInfo,
              "unknown command !" + name + " from " + run->outcome.session_id);
          return ReplyWith(std::move(run),
                           "Unknown command: !" + name + ". Send !help for the list of commands.");
        }
        if (!*answer) {
          run->outcome.failed = true;
          run->outcome.error = "command !" + name + " failed: " + answer->error().message;
          Log(*run, LogLevel::kError, run->outcome.error);
          auto failure = FailureReply(run->state.query.Settings().output, run->outcome.error);
          if (!failure) {
            run->outcome.kind = OutcomeKind::kIgnored;
            run->outcome.reason = IgnoreReason::kFailureHidden;
            run->finished = true;
            return run->done(std::move(run->outcome));
          }
          return ReplyWith(std::move(run), std::move(*failure));
        }
        Log(*run, LogLevel::kInfo, "command !" + name + " from " + run->outcome.session_id);
        ReplyWith(std::move(run), std::move(**answer));
      });
}

void PipelineEngine::RunCommand(std::shared_ptr<Run> run) {
  Command command = ParseCommand(run->state.text);
  EngineOutcome& outcome = run->outcome;
  std::string text;
  switch (command.kind) {
    case CommandKind::kHelp:
      text = HelpText();
      if (plugins_) {
        for (const auto& [name, description] :
             plugins_->Commands(domain::PluginBinding::FromPipelineConfig(run->Config()))) {
          text += "\n!" + name + (description.empty() ? "" : " - " + description);
        }
      }
      break;
    case CommandKind::kReset: {
      domain::ConversationKey key{run->state.pipeline,
                                  util::BotId::FromTrusted(run->state.query.bot_uuid),
                                  outcome.session_id};
      auto cleared = memory_.Clear(key);
      for (auto& [name, runner] : runners_) runner->Forget(key);
      if (cleared) {
        text = "The conversation has been reset.";
        Log(*run, LogLevel::kInfo, "conversation of " + outcome.session_id + " reset");
      } else {
        outcome.failed = true;
        outcome.error = "could not reset the conversation: " + cleared.error().message;
        Log(*run, LogLevel::kError, outcome.error);
        auto failure = FailureReply(run->state.query.Settings().output, outcome.error);
        if (!failure) {
          outcome.kind = OutcomeKind::kIgnored;
          outcome.reason = IgnoreReason::kFailureHidden;
          run->finished = true;
          run->done(std::move(outcome));
          return;
        }
        text = std::move(*failure);
      }
      break;
    }
    default:
      if (plugins_) return RunPluginCommand(std::move(run), command);
      text = "Unknown command: !" + command.name + ". Send !help for the list of commands.";
      Log(*run, LogLevel::kInfo,
          "unknown command !" + command.name + " from " + outcome.session_id);
      break;
  }
  outcome.kind = OutcomeKind::kReplied;
  outcome.reply = ReplyPrefix(run->state.query);
  outcome.reply.push_back(Plain(std::move(text)));
  run->finished = true;
  run->done(std::move(outcome));
}

void PipelineEngine::RunRunner(std::shared_ptr<Run> run) {
  // 7. The runner.
  const std::string& name = run->state.query.Settings().runner;
  Runner* runner = &local_agent_;
  if (name != kLocalAgent) {
    auto it = runners_.find(name);
    if (it == runners_.end()) {
      Finish(std::move(run), util::Fail(util::ErrorCode::kInvalidArgument,
                                        "runner '" + name + "' is not available"));
      return;
    }
    runner = it->second;
  }
  AgentInput input = MakeAgentInput(run->state);
  if (run->on_notice && run->state.query.Settings().output.track_function_calls) {
    // LangBot's wording: the names joined with dots.
    input.on_tool_calls = [notice = run->on_notice](const std::vector<std::string>& names) {
      notice(domain::MessageChain{Plain(fmt::format("Call {}...", fmt::join(names, ".")))});
    };
  }
  // The config lives in run->state.query, which the completion keeps alive.
  const util::JsonObject& config = run->Config();
  runner->Run(config, std::move(input), run->on_delta,
              [this, run](util::Result<AgentReply> result) {
                // `run` is copied, not moved: a runner answering twice must still find it.
                Finish(run, std::move(result));
              });
}

void PipelineEngine::Finish(std::shared_ptr<Run> run, util::Result<AgentReply> result) {
  if (run->finished.exchange(true)) return;  // a runner answering twice is ignored
  const util::JsonObject& config = run->Config();
  const OutputSettings& output = run->state.query.Settings().output;
  EngineOutcome& outcome = run->outcome;
  auto elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now() - run->started).count();

  // 8. Output.
  if (!result) {
    outcome.failed = true;
    outcome.error = result.error().message;
    Log(*run, LogLevel::kError,
        "run failed for " + outcome.session_id + " after " + std::to_string(elapsed_ms) +
            " ms: " + outcome.error);
    auto failure = FailureReply(output, outcome.error);
    if (!failure) {
      outcome.kind = OutcomeKind::kIgnored;
      outcome.reason = IgnoreReason::kFailureHidden;
    } else {
      outcome.kind = OutcomeKind::kReplied;
      outcome.reply = ReplyPrefix(run->state.query);
      outcome.reply.push_back(Plain(std::move(*failure)));
    }
    run->done(std::move(outcome));
    return;
  }
  for (const auto& note : result->notes) {
    Log(*run, LogLevel::kInfo, note + " (" + outcome.session_id + ")");
  }
  const auto binding = domain::PluginBinding::FromPipelineConfig(config);
  if (plugins_ && plugins_->Listens(binding, "reply_ready")) {
    // Plugins may edit the reply before the output rules shape it.
    util::JsonObject data =
        PluginEvent(run->state.query, run->state.pipeline, run->outcome.session_id);
    data["reply"] = result->text;
    plugins_->Transform(
        binding, "reply_ready", std::move(data), "reply",
        [this, run, reply = std::move(*result), elapsed_ms](util::JsonObject edited) mutable {
          if (const auto* r = edited.if_contains("reply"); r && r->is_string()) {
            reply.text = std::string(r->as_string());
          }
          Shape(std::move(run), std::move(reply), elapsed_ms);
        });
    return;
  }
  Shape(std::move(run), std::move(*result), elapsed_ms);
}

void PipelineEngine::Shape(std::shared_ptr<Run> run, AgentReply reply, std::int64_t elapsed_ms) {
  const StageSettings& settings = run->state.query.Settings();
  EngineOutcome& outcome = run->outcome;
  auto* result = &reply;
  std::string text = settings.output.remove_think ? RemoveThink(result->text) : result->text;
  FilterDecision out = FilterOutgoing(settings.filter, ban_words_, text);
  if (out.action == FilterAction::kMask) {
    Log(*run, LogLevel::kInfo, "ban words masked in the reply to " + outcome.session_id);
  }
  text = std::move(out.text);
  outcome.kind = OutcomeKind::kReplied;
  if (text.empty()) {
    Log(*run, LogLevel::kWarning, "the model's reply to " + outcome.session_id + " is empty");
    run->done(std::move(outcome));
    return;
  }
  domain::MessageChain body{Plain(std::move(text))};
  // The adapter splits any text over its platform's per-message limit, whatever the strategy;
  // "forward" asks for one merged message where the platform has them.
  LongTextDecision long_text = CheckLongText(settings.output, body);
  auto how_long = [&long_text] {
    return "long reply (" + std::to_string(long_text.length) + " > " +
           std::to_string(long_text.threshold) + " characters)";
  };
  if (long_text.action == LongTextAction::kForward) {
    outcome.form = domain::ReplyForm::kForward;
    Log(*run, LogLevel::kInfo,
        how_long() + ": sent as a forward message where the platform has them, else split");
  } else if (long_text.action == LongTextAction::kImageUnsupported) {
    Log(*run, LogLevel::kWarning,
        how_long() +
            ": long-text strategy \"image\" is not supported by Switchboard; sent as "
            "text, split at the platform's message limit");
  }
  outcome.reply = ReplyPrefix(run->state.query);
  for (auto& element : body) outcome.reply.push_back(std::move(element));
  outcome.made_by = (result->model_uuid.empty() ? "" : "model " + result->model_uuid + ", ") +
                    std::to_string(elapsed_ms) + " ms";
  run->done(std::move(outcome));
}

}  // namespace sb::pipeline
