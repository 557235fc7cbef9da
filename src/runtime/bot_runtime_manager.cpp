#include "runtime/bot_runtime_manager.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <utility>

#include "pipeline/config_values.hpp"
#include "pipeline/query.hpp"
#include "runtime/bot_log_writer.hpp"
#include "runtime/message_aggregator.hpp"
#include "runtime/session_scheduler.hpp"

namespace sb::runtime {

namespace asio = boost::asio;
using domain::LogLevel;
using domain::RuntimeState;
using domain::RuntimeStatus;
using util::ErrorCode;

namespace {

constexpr std::size_t kMaxLogTextBytes = 4000;

// Cuts at a UTF-8 boundary so a log entry is always valid text.
std::string TruncateUtf8(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  text += "…";
  return text;
}

// The chain as one line of the event log.
std::string DescribeChain(const domain::MessageChain& chain) {
  std::string out;
  for (const auto& e : chain) {
    switch (e.type) {
      case domain::ElementType::kPlain:
        out += e.text;
        break;
      case domain::ElementType::kImage:
        out += "[Image]";
        break;
      case domain::ElementType::kAt:
        out += "@" + e.target + " ";
        break;
      case domain::ElementType::kAtAll:
        out += "@all ";
        break;
      case domain::ElementType::kVoice:
        out += "[Voice]";
        break;
      case domain::ElementType::kQuote:
        out += "[Quote] ";
        break;
      case domain::ElementType::kFile:
        out += "[File " + e.name + "]";
        break;
      case domain::ElementType::kSource:
        break;
    }
  }
  return out;
}

// Image URLs worth showing in the console: http(s) only (a data: URL would bloat the log).
std::vector<std::string> LogImages(const domain::MessageChain& chain) {
  std::vector<std::string> out;
  for (const auto& e : chain) {
    if (e.type != domain::ElementType::kImage) continue;
    if (e.url.starts_with("http://") || e.url.starts_with("https://")) out.push_back(e.url);
  }
  return out;
}

domain::MessageElement Plain(std::string text) {
  domain::MessageElement e;
  e.type = domain::ElementType::kPlain;
  e.text = std::move(text);
  return e;
}

double RandomUnit() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

// output.force-delay: a pause of min..max seconds before a reply goes out, so a bot does not
// answer faster than a person could.
std::chrono::milliseconds ForceDelay(const util::JsonObject& config) {
  double min = pipeline::GetNumber(config, {"output", "force-delay", "min"}, 0);
  double max = pipeline::GetNumber(config, {"output", "force-delay", "max"}, 0);
  if (!(min > 0) && !(max > 0)) return std::chrono::milliseconds(0);
  min = std::clamp(min, 0.0, 600.0);
  max = std::clamp(max, min, 600.0);
  return std::chrono::milliseconds(
      static_cast<std::int64_t>((min + (max - min) * RandomUnit()) * 1000.0));
}

bool SameRuntime(const domain::Bot& a, const domain::Bot& b) {
  return a.adapter == b.adapter && a.adapter_config == b.adapter_config && a.enable == b.enable &&
         a.use_pipeline_uuid == b.use_pipeline_uuid;
}

pipeline::LauncherType LauncherOf(domain::TargetType type) {
  return type == domain::TargetType::kGroup ? pipeline::LauncherType::kGroup
                                            : pipeline::LauncherType::kPerson;
}

}  // namespace

class Incarnation;

struct BotRuntimeManager::Impl : std::enable_shared_from_this<Impl> {
  Impl(RuntimeDeps d, RuntimeOptions o)
      : deps(std::move(d)),
        options(std::move(o)),
        log_writer(*deps.logs, *deps.blocking),
        scheduler(options.max_in_flight, options.max_queued,
                  [blocking = deps.blocking](std::function<void()> job) {
                    blocking->Post(std::move(job));
                  }) {}

  struct Entry {
    std::shared_ptr<Incarnation> current;
    RuntimeStatus status;
    // Earlier incarnations still stopping: `current` starts only when this is back to zero, so
    // two adapters of one bot never run together (two pollers on one token would fight).
    int stopping = 0;
    bool removed = false;  // deleted; kept until its last incarnation has stopped
  };

  // One received message on its way through the pipeline.
  struct MessageRun {
    std::shared_ptr<Incarnation> incarnation;
    platforms::ReceivedMessage message;
    std::string session_id;
    std::string scheduler_key;  // bot uuid + "/" + session id
    std::shared_ptr<const util::JsonObject> config;
    SessionScheduler::Finished finished;
    std::string made_by;  // the engine's note on the reply ("model <uuid>, 12 ms")
  };

  struct PipelineConfig {
    util::PipelineId id;
    std::shared_ptr<const util::JsonObject> config;
  };

  RuntimeDeps deps;
  RuntimeOptions options;
  BotLogWriter log_writer;
  SessionScheduler scheduler;
  std::shared_ptr<MessageAggregator> aggregator = MessageAggregator::Make(deps.executor);

  std::mutex mu;
  std::condition_variable stopped_cv;
  std::map<std::string, Entry> bots;                    // by bot uuid; guarded by mu
  std::set<std::shared_ptr<Incarnation>> stopping_all;  // Stop not finished; guarded by mu
  bool shut_down = false;                               // guarded by mu

  std::mutex configs_mu;
  std::map<std::string, PipelineConfig> configs;  // by pipeline uuid; "" is the default
  std::uint64_t configs_generation = 0;

  void Log(const util::BotId& bot, int retention, LogLevel level, std::string text,
           std::string session = {}, std::vector<std::string> images = {}) {
    domain::BotLogEntry entry;
    entry.timestamp = deps.clock->Now();
    entry.level = level;
    entry.text = TruncateUtf8(std::move(text), kMaxLogTextBytes);
    entry.images = std::move(images);
    entry.message_session_id = std::move(session);
    log_writer.Append(bot, retention, std::move(entry));
  }

  int RetentionOf(const domain::Bot& bot) const {
    return bot.log_retention.value_or(options.default_log_retention);
  }

  void Apply(const domain::Bot& bot);
  void StopIncarnation(const std::shared_ptr<Incarnation>& inc, std::function<void()> then);
  void Retire(const std::string& key, std::shared_ptr<Incarnation> old);
  void Dispatch(const std::shared_ptr<Incarnation>& inc, platforms::ReceivedMessage message);
  void Enqueue(const std::shared_ptr<Incarnation>& inc, platforms::ReceivedMessage message);
  std::optional<PipelineConfig> CachedConfig(const domain::Bot& bot);
  void Run(std::shared_ptr<MessageRun> run);
  void OnOutcome(std::shared_ptr<MessageRun> run, pipeline::EngineOutcome outcome);
  void Deliver(std::shared_ptr<MessageRun> run, domain::MessageChain reply);
  void SetConnected(const Incarnation& inc, std::string account_id);
  void SetTrouble(const Incarnation& inc, std::string why);
  util::Result<PipelineConfig> ConfigFor(const domain::Bot& bot);
  // `inc` while it runs; once it is stopping (a restart), the bot's next incarnation of the same
  // adapter, so replies and held messages are not lost to the restart; null when there is none.
  std::shared_ptr<Incarnation> Live(const std::shared_ptr<Incarnation>& inc);

  template <typename Fn>
  void After(std::chrono::milliseconds delay, Fn fn) {
    auto timer = std::make_shared<asio::steady_timer>(deps.executor, delay);
    timer->async_wait(
        [timer, fn = std::move(fn)](const boost::system::error_code&) mutable { fn(); });
  }
};

// One start of a bot: its adapter and what the adapter reports. A restart makes a new
// incarnation once the old one has stopped, so two adapters of one bot never run together.
class Incarnation final : public platforms::AdapterHost,
                          public std::enable_shared_from_this<Incarnation> {
 public:
  Incarnation(std::weak_ptr<BotRuntimeManager::Impl> impl, domain::Bot bot)
      : impl_(std::move(impl)), bot_(std::move(bot)), retention_(0) {}

  void Init(std::unique_ptr<platforms::PlatformAdapter> adapter, int retention) {
    adapter_ = std::move(adapter);
    retention_ = retention;
  }

  const domain::Bot& bot() const { return bot_; }
  platforms::PlatformAdapter& adapter() { return *adapter_; }
  int retention() const { return retention_.load(); }
  void set_retention(int retention) { retention_ = retention; }
  bool stop_requested() const { return stop_requested_.load(); }
  bool started() const {
    std::lock_guard lock(mu_);
    return started_;
  }

  std::string account_id() const {
    std::lock_guard lock(mu_);
    return account_id_;
  }

  void Start() {
    {
      std::lock_guard lock(mu_);
      if (stop_requested_ || started_) return;
      started_ = true;
    }
    adapter_->Start();
  }

  // `stopped` runs once the adapter has ended. A never-started adapter is stopped too: sends
  // made through it (replies re-routed during a restart) must end as well.
  void Stop(std::function<void()> stopped) {
    {
      std::lock_guard lock(mu_);
      if (stop_requested_.exchange(true)) return;
    }
    adapter_->Stop(std::move(stopped));
  }

  // AdapterHost
  void OnMessage(platforms::ReceivedMessage message) override {
    auto impl = impl_.lock();
    if (impl && !stop_requested_) impl->Dispatch(shared_from_this(), std::move(message));
  }
  void OnConnected(std::string bot_account_id) override {
    {
      std::lock_guard lock(mu_);
      account_id_ = bot_account_id;
    }
    if (auto impl = impl_.lock()) impl->SetConnected(*this, std::move(bot_account_id));
  }
  void OnTrouble(std::string why) override {
    if (auto impl = impl_.lock()) impl->SetTrouble(*this, std::move(why));
  }
  void Log(LogLevel level, std::string text) override {
    if (auto impl = impl_.lock()) impl->Log(bot_.uuid, retention(), level, std::move(text));
  }

 private:
  std::weak_ptr<BotRuntimeManager::Impl> impl_;
  const domain::Bot bot_;
  std::atomic<int> retention_;
  std::unique_ptr<platforms::PlatformAdapter> adapter_;
  mutable std::mutex mu_;
  bool started_ = false;  // guarded by mu_
  std::atomic<bool> stop_requested_{false};
  std::string account_id_;  // guarded by mu_
};

void BotRuntimeManager::Impl::Apply(const domain::Bot& bot) {
  const std::string key = bot.uuid.str();
  std::shared_ptr<Incarnation> old;
  std::shared_ptr<Incarnation> next;
  std::string problem;
  bool start_now = false;
  {
    std::lock_guard lock(mu);
    if (shut_down) return;
    Entry& entry = bots[key];
    entry.removed = false;
    if (entry.current && SameRuntime(entry.current->bot(), bot)) {
      entry.current->set_retention(RetentionOf(bot));  // the one setting read while running
      return;
    }
    if (!entry.current && !bot.enable && entry.status.state == RuntimeState::kStopped) return;
    old = std::move(entry.current);
    entry.current = nullptr;
    entry.status = {RuntimeState::kStopped, "", deps.clock->Now(), ""};
    if (bot.enable) {
      auto factory = deps.adapters.find(bot.adapter);
      if (factory == deps.adapters.end()) {
        problem = fmt::format("the {} adapter cannot run yet in this version", bot.adapter);
        entry.status = {RuntimeState::kError, problem, deps.clock->Now(), ""};
      } else {
        next = std::make_shared<Incarnation>(weak_from_this(), bot);
        platforms::AdapterContext context;
        context.bot_uuid = key;
        context.config = bot.adapter_config;
        if (!options.webhook_prefix.empty()) {
          context.webhook_url = options.webhook_prefix + "/bots/" + key;
        }
        context.executor = deps.executor;
        context.http = deps.http;
        context.websockets = deps.websockets;
        context.clock = deps.clock;
        context.host = next.get();
        next->Init(factory->second(std::move(context)), RetentionOf(bot));
        entry.current = next;
        entry.status = {RuntimeState::kStarting, "", deps.clock->Now(), ""};
      }
    }
    if (old) ++entry.stopping;
    start_now = next && entry.stopping == 0;
  }
  const int retention = RetentionOf(bot);
  if (!problem.empty()) Log(bot.uuid, retention, LogLevel::kError, problem);
  if (next) {
    Log(bot.uuid, retention, LogLevel::kInfo,
        fmt::format("{} with the {} adapter", old ? "restarting" : "starting", bot.adapter));
  }
  if (old) Retire(key, std::move(old));
  // Read the pipeline now (Apply runs where it may block), so the first messages find it cached
  // and aggregation applies to them too. A failure shows on the first message instead.
  if (next) (void)ConfigFor(bot);
  if (start_now) next->Start();
}

void BotRuntimeManager::Impl::Retire(const std::string& key, std::shared_ptr<Incarnation> old) {
  std::weak_ptr<Impl> weak = weak_from_this();
  StopIncarnation(old, [weak, key] {
    auto self = weak.lock();
    if (!self) return;
    std::shared_ptr<Incarnation> successor;
    {
      std::lock_guard lock(self->mu);
      auto it = self->bots.find(key);
      if (it == self->bots.end()) return;
      if (--it->second.stopping == 0) {
        successor = it->second.current;
        if (it->second.removed) self->bots.erase(it);
      }
    }
    if (successor) successor->Start();  // a no-op when it already started or was stopped
  });
}

void BotRuntimeManager::Impl::StopIncarnation(const std::shared_ptr<Incarnation>& inc,
                                              std::function<void()> then) {
  {
    std::lock_guard lock(mu);
    stopping_all.insert(inc);
  }
  std::weak_ptr<Impl> weak = weak_from_this();
  inc->Stop([weak, inc, then = std::move(then)] {
    if (auto self = weak.lock()) {
      self->Log(inc->bot().uuid, inc->retention(), LogLevel::kInfo, "stopped");
      {
        std::lock_guard lock(self->mu);
        self->stopping_all.erase(inc);
      }
      self->stopped_cv.notify_all();
    }
    if (then) then();
  });
}

void BotRuntimeManager::Impl::SetConnected(const Incarnation& inc, std::string account_id) {
  bool changed = false;
  {
    std::lock_guard lock(mu);
    auto it = bots.find(inc.bot().uuid.str());
    if (it == bots.end() || it->second.current.get() != &inc) return;
    RuntimeStatus& status = it->second.status;
    changed = status.state != RuntimeState::kRunning || status.bot_account_id != account_id;
    if (changed) status = {RuntimeState::kRunning, "", deps.clock->Now(), account_id};
  }
  if (changed) {
    Log(inc.bot().uuid, inc.retention(), LogLevel::kInfo,
        account_id.empty() ? std::string("running")
                           : fmt::format("running as account {}", account_id));
  }
}

void BotRuntimeManager::Impl::SetTrouble(const Incarnation& inc, std::string why) {
  bool changed = false;
  {
    std::lock_guard lock(mu);
    auto it = bots.find(inc.bot().uuid.str());
    if (it == bots.end() || it->second.current.get() != &inc) return;
    RuntimeStatus& status = it->second.status;
    // The same failure repeated at every retry is logged once.
    changed = status.state != RuntimeState::kError || status.error != why;
    if (changed) status = {RuntimeState::kError, why, deps.clock->Now(), status.bot_account_id};
  }
  if (changed) Log(inc.bot().uuid, inc.retention(), LogLevel::kError, why);
}

std::optional<BotRuntimeManager::Impl::PipelineConfig> BotRuntimeManager::Impl::CachedConfig(
    const domain::Bot& bot) {
  const std::string key = bot.use_pipeline_uuid ? bot.use_pipeline_uuid->str() : std::string();
  std::lock_guard lock(configs_mu);
  if (auto it = configs.find(key); it != configs.end()) return it->second;
  return std::nullopt;
}

util::Result<BotRuntimeManager::Impl::PipelineConfig> BotRuntimeManager::Impl::ConfigFor(
    const domain::Bot& bot) {
  const std::string key = bot.use_pipeline_uuid ? bot.use_pipeline_uuid->str() : std::string();
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(configs_mu);
    if (auto it = configs.find(key); it != configs.end()) return it->second;
    generation = configs_generation;
  }
  auto pipeline = bot.use_pipeline_uuid ? deps.pipelines->Get(*bot.use_pipeline_uuid)
                                        : deps.pipelines->GetDefault();
  if (!pipeline) return tl::unexpected(pipeline.error());
  pipeline->config[domain::kExtensionsPreferencesKey] = pipeline->extensions_preferences;
  PipelineConfig loaded{pipeline->uuid,
                        std::make_shared<const util::JsonObject>(std::move(pipeline->config))};
  std::lock_guard lock(configs_mu);
  // A change while we read must not leave the older settings cached.
  if (generation == configs_generation) configs[key] = loaded;
  return loaded;
}

std::shared_ptr<Incarnation> BotRuntimeManager::Impl::Live(
    const std::shared_ptr<Incarnation>& inc) {
  if (!inc->stop_requested()) return inc;
  std::lock_guard lock(mu);
  auto it = bots.find(inc->bot().uuid.str());
  if (it == bots.end() || !it->second.current) return nullptr;
  const auto& next = it->second.current;
  if (next->stop_requested() || next->bot().adapter != inc->bot().adapter) return nullptr;
  return next;
}

void BotRuntimeManager::Impl::Dispatch(const std::shared_ptr<Incarnation>& inc,
                                       platforms::ReceivedMessage message) {
  {
    std::lock_guard lock(mu);
    if (shut_down) return;
  }
  auto config = CachedConfig(inc->bot());
  if (!config) {
    // Right after a start or a pipeline change: the run reads the pipeline (and caches it).
    // Aggregation waits for the next message, so that messages keep their order here.
    Enqueue(inc, std::move(message));
    return;
  }
  if (!pipeline::GetBool(*config->config, {"trigger", "message-aggregation", "enabled"}, false)) {
    Enqueue(inc, std::move(message));
    return;
  }
  const double seconds =
      pipeline::GetNumber(*config->config, {"trigger", "message-aggregation", "delay"}, 1.5);
  const auto delay =
      std::chrono::milliseconds(static_cast<std::int64_t>(std::clamp(seconds, 0.0, 10.0) * 1000));
  const std::string key = inc->bot().uuid.str() + "/" +
                          pipeline::SessionId(LauncherOf(message.chat_type), message.chat_id);
  std::weak_ptr<Impl> weak = weak_from_this();
  aggregator->Add(key, std::move(message), delay, [weak, inc](platforms::ReceivedMessage merged) {
    if (auto self = weak.lock()) self->Enqueue(inc, std::move(merged));
  });
}

void BotRuntimeManager::Impl::Enqueue(const std::shared_ptr<Incarnation>& received_by,
                                      platforms::ReceivedMessage message) {
  auto inc = Live(received_by);
  if (!inc) {
    Log(received_by->bot().uuid, received_by->retention(), LogLevel::kWarning,
        "a message arrived while the bot stopped and was not answered",
        pipeline::SessionId(LauncherOf(message.chat_type), message.chat_id));
    return;
  }
  auto run = std::make_shared<MessageRun>();
  run->incarnation = inc;
  run->session_id = pipeline::SessionId(LauncherOf(message.chat_type), message.chat_id);
  run->message = std::move(message);
  run->scheduler_key = inc->bot().uuid.str() + "/" + run->session_id;
  std::weak_ptr<Impl> weak = weak_from_this();
  const bool taken =
      scheduler.Submit(run->scheduler_key, [weak, run](SessionScheduler::Finished finished) {
        run->finished = std::move(finished);
        // Without the manager nothing is left to finish for (its scheduler is gone too).
        if (auto self = weak.lock()) self->Run(run);
      });
  if (taken) return;
  // Refused for load: the sender is told, so the message is not silently lost.
  Log(inc->bot().uuid, inc->retention(), LogLevel::kWarning,
      "too many messages waiting: one from " + run->session_id + " was dropped", run->session_id);
  domain::OutgoingMessage notice{
      run->message.chat_type, run->message.chat_id, {Plain(options.busy_notice)}};
  if (inc->adapter().CheckDeliverable(notice)) {
    inc->adapter().Send(std::move(notice), run->message.message_id,
                        [](util::Result<domain::SendReceipt>) {});
  }
}

void BotRuntimeManager::Impl::Run(std::shared_ptr<MessageRun> run) {
  const domain::Bot& bot = run->incarnation->bot();
  const int retention = run->incarnation->retention();
  const auto& msg = run->message;
  const std::string who = msg.sender_name.empty() ? msg.sender_id : msg.sender_name;
  Log(bot.uuid, retention, LogLevel::kInfo,
      fmt::format("message from {}: {}", who, DescribeChain(msg.chain)), run->session_id,
      LogImages(msg.chain));
  auto config = ConfigFor(bot);
  if (!config) {
    Log(bot.uuid, retention, LogLevel::kError,
        "cannot read the bot's pipeline: " + config.error().message, run->session_id);
    run->finished();
    return;
  }
  run->config = config->config;
  pipeline::Query query =
      pipeline::MakeQuery(bot.uuid.str(), LauncherOf(msg.chat_type), msg.chat_id, msg.sender_id,
                          msg.chain, run->incarnation->account_id(), config->config);
  std::weak_ptr<Impl> weak = weak_from_this();
  deps.engine->Process(config->id, std::move(query), [weak, run](pipeline::EngineOutcome outcome) {
    if (auto self = weak.lock()) self->OnOutcome(run, std::move(outcome));
  });
}

void BotRuntimeManager::Impl::OnOutcome(std::shared_ptr<MessageRun> run,
                                        pipeline::EngineOutcome outcome) {
  const domain::Bot& bot = run->incarnation->bot();
  const int retention = run->incarnation->retention();
  for (auto& line : outcome.log) {
    Log(bot.uuid, retention, line.level, std::move(line.text), run->session_id);
  }
  std::weak_ptr<Impl> weak = weak_from_this();
  if (outcome.kind == pipeline::OutcomeKind::kDeferred) {
    // Held by the rate limiter: the session's turn stays taken until the run resumes, but its
    // slot of the global limit is given back, so waiting sessions cannot starve other bots.
    scheduler.Yield(run->scheduler_key);
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(outcome.wait_until -
                                                                      deps.clock->Now());
    After(std::max(wait, std::chrono::milliseconds(0)),
          [weak, run, deferred = std::move(outcome.deferred)]() mutable {
            auto self = weak.lock();
            if (!self) return;
            if (!self->Live(run->incarnation)) {
              self->Log(run->incarnation->bot().uuid, run->incarnation->retention(),
                        LogLevel::kInfo, "the bot stopped: a rate-limited message was dropped",
                        run->session_id);
              return run->finished();
            }
            self->deps.blocking->Post([weak, run, deferred = std::move(deferred)]() mutable {
              auto self = weak.lock();
              if (!self) return;
              self->deps.engine->Resume(std::move(deferred),
                                        [weak, run](pipeline::EngineOutcome resumed) {
                                          if (auto self = weak.lock()) {
                                            self->OnOutcome(run, std::move(resumed));
                                          }
                                        });
            });
          });
    return;
  }
  if (outcome.reply.empty()) {
    run->finished();
    return;
  }
  run->made_by = std::move(outcome.made_by);
  const auto delay = run->config ? ForceDelay(*run->config) : std::chrono::milliseconds(0);
  if (delay.count() > 0) {
    scheduler.Yield(run->scheduler_key);  // a pause is not work: free the global slot
    After(delay, [weak, run, reply = std::move(outcome.reply)]() mutable {
      if (auto self = weak.lock()) self->Deliver(run, std::move(reply));
    });
    return;
  }
  Deliver(std::move(run), std::move(outcome.reply));
}

void BotRuntimeManager::Impl::Deliver(std::shared_ptr<MessageRun> run, domain::MessageChain reply) {
  const domain::Bot& bot = run->incarnation->bot();
  const int retention = run->incarnation->retention();
  domain::OutgoingMessage out{run->message.chat_type, run->message.chat_id, std::move(reply)};
  // A restart while the model was thinking: the reply goes out through the new adapter.
  auto target = Live(run->incarnation);
  if (!target) {
    Log(bot.uuid, retention, LogLevel::kWarning,
        "the bot stopped before its reply could be sent: " + DescribeChain(out.chain),
        run->session_id);
    run->finished();
    return;
  }
  run->incarnation = target;
  if (auto ok = run->incarnation->adapter().CheckDeliverable(out); !ok) {
    Log(bot.uuid, retention, LogLevel::kError,
        "the reply cannot be delivered: " + ok.error().message, run->session_id);
    run->finished();
    return;
  }
  std::string text = run->made_by.empty()
                         ? "reply: " + DescribeChain(out.chain)
                         : "reply (" + run->made_by + "): " + DescribeChain(out.chain);
  std::weak_ptr<Impl> weak = weak_from_this();
  run->incarnation->adapter().Send(
      std::move(out), run->message.message_id,
      [weak, run, text = std::move(text)](util::Result<domain::SendReceipt> sent) {
        if (auto self = weak.lock()) {
          const auto& inc = *run->incarnation;
          if (sent) {
            self->Log(inc.bot().uuid, inc.retention(), LogLevel::kInfo, text, run->session_id);
          } else {
            self->Log(inc.bot().uuid, inc.retention(), LogLevel::kError,
                      sent.error().code == ErrorCode::kCancelled
                          ? "the bot stopped while its reply was being sent"
                          : "the reply was not delivered: " + sent.error().message,
                      run->session_id);
          }
          run->finished();
        }
      });
}

BotRuntimeManager::BotRuntimeManager(RuntimeDeps deps, RuntimeOptions options)
    : impl_(std::make_shared<Impl>(std::move(deps), std::move(options))) {}

BotRuntimeManager::~BotRuntimeManager() = default;

std::optional<RuntimeStatus> BotRuntimeManager::Status(const util::BotId& id) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->bots.find(id.str());
  if (it == impl_->bots.end() || it->second.removed) return std::nullopt;
  return it->second.status;
}

void BotRuntimeManager::Apply(const domain::Bot& bot) { impl_->Apply(bot); }

void BotRuntimeManager::Remove(const util::BotId& id) {
  std::shared_ptr<Incarnation> old;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->bots.find(id.str());
    if (it == impl_->bots.end()) return;
    old = std::move(it->second.current);
    it->second.current = nullptr;
    if (old) ++it->second.stopping;
    if (it->second.stopping == 0) {
      impl_->bots.erase(it);
    } else {
      // Kept (as a tombstone) until the last adapter stopped, so a quick re-Apply still waits.
      it->second.removed = true;
      it->second.status = {RuntimeState::kStopped, "", impl_->deps.clock->Now(), ""};
    }
  }
  if (old) impl_->Retire(id.str(), std::move(old));
}

void BotRuntimeManager::Send(const util::BotId& id, const domain::OutgoingMessage& message,
                             std::function<void(util::Result<domain::SendReceipt>)> done) {
  std::shared_ptr<Incarnation> inc;
  RuntimeStatus status;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->bots.find(id.str());
    if (it != impl_->bots.end() && !it->second.removed) {
      inc = it->second.current;
      status = it->second.status;
    }
  }
  if (!inc || status.state != RuntimeState::kRunning) {
    std::string why = fmt::format("bot {} is not running", id.str());
    if (status.state == RuntimeState::kError) why += ": " + status.error;
    if (status.state == RuntimeState::kStarting) why = fmt::format("bot {} is starting", id.str());
    return done(util::Fail(ErrorCode::kConflict, why));
  }
  if (auto ok = inc->adapter().CheckDeliverable(message); !ok) {
    return done(tl::unexpected(ok.error()));
  }
  const std::string session =
      pipeline::SessionId(LauncherOf(message.target_type), message.target_id);
  std::weak_ptr<Impl> weak = impl_;
  std::string text = DescribeChain(message.chain);
  // The platform's own timeouts bound the wait; no thread waits with it.
  inc->adapter().Send(
      message, "",
      [weak, inc, id, session, text = std::move(text),
       done = std::move(done)](util::Result<domain::SendReceipt> sent) {
        if (auto self = weak.lock()) {
          if (sent) {
            self->Log(id, inc->retention(), LogLevel::kInfo, "sent through the API: " + text,
                      session);
          } else {
            self->Log(id, inc->retention(), LogLevel::kError,
                      "sending through the API failed: " + sent.error().message, session);
          }
        }
        if (!sent && sent.error().code == ErrorCode::kCancelled) {
          return done(util::Fail(ErrorCode::kConflict, fmt::format("bot {} stopped", id.str())));
        }
        done(std::move(sent));
      });
}

void BotRuntimeManager::StartAll(const std::vector<domain::Bot>& bots) {
  for (const auto& bot : bots) {
    if (bot.enable) impl_->Apply(bot);
  }
}

void BotRuntimeManager::HandlePlatformCall(const util::BotId& id, domain::PlatformCall call,
                                           std::function<void(domain::PlatformAnswer)> answer) {
  std::shared_ptr<Incarnation> inc;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->bots.find(id.str());
    if (it != impl_->bots.end()) inc = it->second.current;
  }
  if (!inc || inc->stop_requested()) {
    util::JsonObject body{{"code", -1}, {"msg", fmt::format("bot {} is not running", id.str())}};
    answer({409, "application/json", util::SerializeJson(body)});
    return;
  }
  if (!inc->started()) {
    // Restarting: the previous adapter is still closing. The platform retries a 503.
    util::JsonObject body{{"code", -1}, {"msg", fmt::format("bot {} is restarting", id.str())}};
    answer({503, "application/json", util::SerializeJson(body)});
    return;
  }
  inc->adapter().HandleWebhook(std::move(call), std::move(answer));
}

void BotRuntimeManager::PipelineChanged(const util::PipelineId& id) {
  {
    std::lock_guard lock(impl_->configs_mu);
    ++impl_->configs_generation;
    impl_->configs.erase(id.str());
    impl_->configs.erase("");  // the default may have been this one
  }
  // Re-read at once (the pipeline service calls this where it may block), so messages right
  // after the change find the new settings cached.
  domain::Bot probe;
  probe.use_pipeline_uuid = id;
  (void)impl_->ConfigFor(probe);
}

void BotRuntimeManager::StopAll(std::chrono::milliseconds grace) {
  std::vector<std::shared_ptr<Incarnation>> running;
  {
    std::lock_guard lock(impl_->mu);
    impl_->shut_down = true;
    impl_->aggregator->Close();
    for (auto& [key, entry] : impl_->bots) {
      if (entry.current) running.push_back(std::move(entry.current));
      entry.status = {RuntimeState::kStopped, "", impl_->deps.clock->Now(), ""};
    }
  }
  for (auto& inc : running) impl_->StopIncarnation(inc, nullptr);
  std::unique_lock lock(impl_->mu);
  if (!impl_->stopped_cv.wait_for(lock, grace, [&] { return impl_->stopping_all.empty(); })) {
    spdlog::warn("{} bot(s) did not stop within {} ms", impl_->stopping_all.size(), grace.count());
  }
}

void BotRuntimeManager::CommitLogs() { impl_->log_writer.Commit(); }

std::size_t BotRuntimeManager::InFlight() const {
  return impl_->scheduler.InFlight() + impl_->scheduler.Queued();
}

}  // namespace sb::runtime
