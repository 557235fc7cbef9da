#include "app/bot_stack.hpp"

#include <spdlog/spdlog.h>

#include "net/http_client.hpp"
#include "net/websocket.hpp"
#include "pipeline/content_filter.hpp"
#include "pipeline/engine.hpp"
#include "pipeline/local_agent_runner.hpp"
#include "pipeline/message_driver.hpp"
#include "pipeline/rate_limiter.hpp"
#include "pipeline/trigger_rules.hpp"
#include "platforms/dingtalk/dingtalk_adapter.hpp"
#include "platforms/discord/discord_adapter.hpp"
#include "platforms/kook/kook_adapter.hpp"
#include "platforms/lark/lark_adapter.hpp"
#include "platforms/line/line_adapter.hpp"
#include "platforms/officialaccount/oa_adapter.hpp"
#include "platforms/onebot/onebot_adapter.hpp"
#include "platforms/qqofficial/qqofficial_adapter.hpp"
#include "platforms/satori/satori_adapter.hpp"
#include "platforms/slack/slack_adapter.hpp"
#include "platforms/telegram/telegram_adapter.hpp"
#include "platforms/web_page_bot/web_page_adapter.hpp"
#include "platforms/webhook/webhook_adapter.hpp"
#include "platforms/wechatpad/wechatpad_adapter.hpp"
#include "platforms/wecom/wecom_adapter.hpp"
#include "platforms/wecom/wecomcs_adapter.hpp"
#include "platforms/wecombot/wecombot_adapter.hpp"
#include "runners/coze_runner.hpp"
#include "runners/dashscope_runner.hpp"
#include "runners/dify_runner.hpp"
#include "runners/langflow_runner.hpp"
#include "runners/n8n_runner.hpp"
#include "runners/tbox_runner.hpp"
#include "runtime/bot_runtime_manager.hpp"
#include "runtime/debug_chat.hpp"
#include "runtime/in_memory_conversations.hpp"
#include "runtime/write_behind_conversations.hpp"
#include "services/model_resolver.hpp"

namespace sb::app {

struct BotStack::Parts {
  Parts(Core& core, boost::asio::any_io_executor executor, std::shared_ptr<net::HttpClient> http,
        std::shared_ptr<net::WebSocketTransport> websockets, domain::LlmGateway& gateway,
        util::BlockingExecutor& blocking, domain::MonitoringSink* monitoring,
        util::MetricsRegistry* metrics)
      : dify(executor, http),
        n8n(executor, http),
        langflow(executor, http),
        coze(executor, http),
        dashscope(executor, http),
        tbox(executor, http),
        resolver(core.models(), core.providers()),
        memory(core.storage().conversations(), blocking,
               {.max_bytes = core.config().runtime.conversation_cache_bytes}),
        agent(gateway, resolver, memory, blocking, clock),
        agent_runner(agent),
        limiter(clock),
        ban_words(pipeline::BanWordList{core.config().runtime.ban_words,
                                        core.config().runtime.ban_word_mask, ""}),
        engine(agent_runner, memory, limiter, ban_words, random, clock),
        debug_agent(gateway, resolver, debug_memory, blocking, clock),
        debug_agent_runner(debug_agent),
        debug_engine(debug_agent_runner, debug_memory, limiter, ban_words, random, clock),
        pipelines(core.storage().pipelines()),
        driver(pipeline::MessageDriver::Make(engine, blocking, clock, random,
                                             DriverOptionsFrom(core.config()))),
        debug_driver(pipeline::MessageDriver::Make(debug_engine, blocking, clock, random,
                                                   runtime::DebugChatRuntime::kDriverOptions)),
        debug_chat(std::make_shared<runtime::DebugChatRuntime>(
            debug_driver, core.storage().pipelines(), pipelines, debug_memory, clock)),
        runtime(MakeDeps(core, std::move(executor), std::move(http), std::move(websockets),
                         blocking, monitoring, metrics),
                MakeOptions(core.config())) {
    // The external runners serve the bots' pipelines and the debug chat alike.
    for (pipeline::PipelineEngine* e : {&engine, &debug_engine}) {
      e->AddRunner("dify-service-api", dify);
      e->AddRunner("n8n-service-api", n8n);
      e->AddRunner("langflow-api", langflow);
      e->AddRunner("coze-api", coze);
      e->AddRunner("dashscope-app-api", dashscope);
      e->AddRunner("tbox-app-api", tbox);
    }
    for (const auto& warning : ban_words.warnings()) {
      spdlog::warn("runtime.ban_words: {}", warning);
    }
  }

  runtime::RuntimeDeps MakeDeps(Core& core, boost::asio::any_io_executor executor,
                                std::shared_ptr<net::HttpClient> http,
                                std::shared_ptr<net::WebSocketTransport> websockets,
                                util::BlockingExecutor& blocking,
                                domain::MonitoringSink* monitoring,
                                util::MetricsRegistry* metrics) {
    runtime::RuntimeDeps deps;
    deps.monitoring = monitoring;
    deps.metrics = metrics;
    deps.executor = std::move(executor);
    deps.http = std::move(http);
    deps.websockets = std::move(websockets);
    deps.blocking = &blocking;
    deps.driver = driver;
    deps.pipelines = &pipelines;
    deps.logs = &core.storage().bot_logs();
    deps.clock = &clock;
    deps.adapters["webhook"] = platforms::webhook::MakeWebhookAdapter;
    deps.adapters["telegram"] = platforms::telegram::MakeTelegramAdapter;
    deps.adapters["aiocqhttp"] = platforms::onebot::MakeOneBotAdapter;
    deps.adapters["slack"] = platforms::slack::MakeSlackAdapter;
    deps.adapters["LINE"] = platforms::line::MakeLineAdapter;
    deps.adapters["qqofficial"] = platforms::qqofficial::MakeQqOfficialAdapter;
    deps.adapters["web_page_bot"] = platforms::web_page::MakeWebPageAdapter;
    deps.adapters["discord"] = platforms::discord::MakeDiscordAdapter;
    deps.adapters["wecom"] = platforms::wecom::MakeWeComAdapter;
    // Customer-service pull cursors outlive each adapter: a restarted bot pulls on from there.
    deps.adapters["wecomcs"] = [cursors = std::make_shared<platforms::wecom::KfCursorStore>()](
                                   platforms::AdapterContext context) {
      return platforms::wecom::MakeWeComCsAdapter(std::move(context), cursors);
    };
    deps.adapters["officialaccount"] = platforms::officialaccount::MakeOfficialAccountAdapter;
    deps.adapters["satori"] = platforms::satori::MakeSatoriAdapter;
    deps.adapters["wechatpad"] = platforms::wechatpad::MakeWeChatPadAdapter;
    deps.adapters["lark"] = platforms::lark::MakeLarkAdapter;
    deps.adapters["kook"] = platforms::kook::MakeKookAdapter;
    deps.adapters["wecombot"] = platforms::wecombot::MakeWeComBotAdapter;
    deps.adapters["dingtalk"] = platforms::dingtalk::MakeDingTalkAdapter;
    return deps;
  }

  static runtime::RuntimeOptions MakeOptions(const config::Config& cfg) {
    runtime::RuntimeOptions options;
    options.busy_notice = cfg.runtime.busy_notice;
    options.webhook_prefix = cfg.api.webhook_prefix;
    while (!options.webhook_prefix.empty() && options.webhook_prefix.back() == '/') {
      options.webhook_prefix.pop_back();
    }
    options.default_log_retention = cfg.system.bot_log_retention;
    return options;
  }

  static pipeline::DriverOptions DriverOptionsFrom(const config::Config& cfg) {
    return {.max_in_flight = static_cast<std::size_t>(cfg.runtime.max_concurrent_pipelines),
            .max_queued = static_cast<std::size_t>(cfg.runtime.max_queued_messages)};
  }

  // First, so that it goes last: the drivers' timers run on its thread.
  util::SystemClock clock;
  pipeline::UniformRandomSource random;
  runners::DifyRunner dify;
  runners::N8nRunner n8n;
  runners::LangflowRunner langflow;
  runners::CozeRunner coze;
  runners::DashScopeRunner dashscope;
  runners::TboxRunner tbox;
  services::StoredModelResolver resolver;
  // Conversation memory read from memory and written behind the replies (one transaction per
  // batch); the pipeline service clears through it too.
  runtime::WriteBehindConversations memory;
  pipeline::LocalAgentRunner agent;
  pipeline::LocalAgentRunnerAdapter agent_runner;
  pipeline::RateLimiter limiter;
  pipeline::BanWordFilter ban_words;
  pipeline::PipelineEngine engine;
  // The console's debug chat: the same pipelines, with memory kept in the process.
  runtime::InMemoryConversations debug_memory;
  pipeline::LocalAgentRunner debug_agent;
  pipeline::LocalAgentRunnerAdapter debug_agent_runner;
  pipeline::PipelineEngine debug_engine;
  // Pipelines as the message path reads them, shared by the bots and the debug chat.
  pipeline::PipelineCache pipelines;
  std::shared_ptr<pipeline::MessageDriver> driver;
  std::shared_ptr<pipeline::MessageDriver> debug_driver;
  std::shared_ptr<runtime::DebugChatRuntime> debug_chat;
  runtime::BotRuntimeManager runtime;
  // Stands between the services and the runtime: which bots run here (bot leases).
  std::unique_ptr<runtime::BotOwnership> ownership;
};

BotStack::BotStack(Core& core, boost::asio::any_io_executor executor,
                   std::shared_ptr<net::HttpClient> http,
                   std::shared_ptr<net::WebSocketTransport> websockets, domain::LlmGateway& gateway,
                   util::BlockingExecutor& blocking, domain::MonitoringSink* monitoring,
                   util::MetricsRegistry* metrics)
    : core_(core),
      parts_(std::make_unique<Parts>(core, std::move(executor), std::move(http),
                                     std::move(websockets), gateway, blocking, monitoring,
                                     metrics)) {}

BotStack::~BotStack() {
  core_.bots().AttachRuntime(nullptr);
  parts_->runtime.SetSendFence(nullptr);
  core_.pipelines().SetChangeListener(nullptr);
  core_.pipelines().SetConversations(&core_.storage().conversations());
}

runtime::BotRuntimeManager& BotStack::runtime() { return parts_->runtime; }

domain::DebugChat& BotStack::debug_chat() { return *parts_->debug_chat; }

void BotStack::SetPluginHooks(domain::PluginHooks* hooks) {
  parts_->engine.SetPluginHooks(hooks);
  parts_->debug_engine.SetPluginHooks(hooks);
  parts_->agent.SetPluginHooks(hooks);
  parts_->debug_agent.SetPluginHooks(hooks);
}

void BotStack::SetMcpTools(domain::McpTools* tools) {
  parts_->agent.SetMcpTools(tools);
  parts_->debug_agent.SetMcpTools(tools);
}

void BotStack::SetKnowledge(domain::KnowledgeRetriever* retriever, std::size_t budget_chars) {
  parts_->agent.SetKnowledge(retriever, budget_chars);
  parts_->debug_agent.SetKnowledge(retriever, budget_chars);
}

void BotStack::SetTakeover(domain::MessageTakeoverListener* listener,
                           std::chrono::milliseconds window) {
  parts_->runtime.SetTakeoverListener(listener, window);
}

void BotStack::Flush() {
  parts_->runtime.CommitLogs();
  parts_->memory.Flush();
}

void BotStack::Start(runtime::OwnershipOptions ownership) {
  parts_->ownership = std::make_unique<runtime::BotOwnership>(
      parts_->runtime, core_.storage().bots(), core_.storage().bot_leases(), std::move(ownership));
  parts_->runtime.SetSendFence(parts_->ownership.get());
  core_.bots().AttachRuntime(parts_->ownership.get());
  core_.pipelines().SetConversations(&parts_->memory);
  core_.pipelines().SetChangeListener(
      [rt = &parts_->runtime](const util::PipelineId& id) { rt->PipelineChanged(id); });
  parts_->ownership->Start();
}

std::vector<util::BotId> BotStack::OwnedBots() const {
  return parts_->ownership ? parts_->ownership->Owned() : std::vector<util::BotId>{};
}

std::uint64_t BotStack::OwnedGeneration() const {
  return parts_->ownership ? parts_->ownership->generation() : 0;
}

void BotStack::BotsChangedElsewhere() {
  if (parts_->ownership) parts_->ownership->ScanSoon();
}

void BotStack::Stop(std::chrono::milliseconds grace) {
  if (parts_->ownership) parts_->ownership->Stop();
  parts_->runtime.StopAll(grace);
  // Only now, with every connection closed, may another instance take the bots.
  if (parts_->ownership) parts_->ownership->ReleaseAll();
}

}  // namespace sb::app
