// The `local-agent` runner of a pipeline: the pipeline's system prompt, the session's remembered
// rounds and the new message go to the primary model, then to each fallback in turn if it fails;
// the exchange is remembered, bounded by `max-round`. Ports only (gateway, resolver, memory), so
// it runs the same under tests and in the runtime.
//   runner.Run(pipeline.config, {key, content}, on_delta, [](Result<AgentReply> r) { ... });
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "domain/conversation.hpp"
#include "domain/knowledge.hpp"
#include "domain/llm.hpp"
#include "domain/mcp.hpp"
#include "domain/plugin_hooks.hpp"
#include "util/blocking_executor.hpp"
#include "util/clock.hpp"
#include "util/json.hpp"

namespace sb::pipeline {

struct AgentInput {
  domain::ConversationKey conversation;
  std::vector<domain::ContentPart> content;  // the user's message: text and images
  // Told the names of the tools a model calls, each round, before they run (may be null;
  // output.misc.track-function-calls). Must not block.
  std::function<void(const std::vector<std::string>& names)> on_tool_calls;
};

struct AgentReply {
  std::string text;
  std::string model_uuid;  // the model that answered (a fallback when the primary failed)
  domain::Usage usage;
  // What the runner did on the way that the bot's event log should show (knowledge retrieval:
  // which files, which scores).
  std::vector<std::string> notes;
};

// The `ai.local-agent` settings of a pipeline config, read leniently (LangBot wrote `model` as a
// plain uuid before it had fallbacks).
struct AgentSettings {
  std::vector<std::string> models;  // primary first, then fallbacks
  int max_rounds = 10;
  std::vector<domain::ChatMessage> prompt;   // system (and example) messages, in order
  std::vector<std::string> knowledge_bases;  // uuids; LangBot's older single `knowledge-base` too
};
AgentSettings ReadAgentSettings(const util::JsonObject& pipeline_config);

// Thread-safe. Call Run from a thread that may block; `done` runs exactly once, on any thread,
// and must not block. `on_delta` (may be null) streams text pieces of the answering model.
class LocalAgentRunner {
 public:
  LocalAgentRunner(domain::LlmGateway& gateway, domain::ModelResolver& models,
                   domain::ConversationRepository& memory, util::BlockingExecutor& blocking,
                   const util::Clock& clock);

  void Run(const util::JsonObject& pipeline_config, AgentInput input,
           std::function<void(const domain::ChatDelta&)> on_delta,
           std::function<void(util::Result<AgentReply>)> done);

  // Plugin tools offered to models with the func_call ability; their calls are run and the
  // results sent back to the model, at most kMaxToolRounds times per message. Before Run; may
  // be null.
  void SetPluginHooks(domain::PluginHooks* hooks) { plugins_ = hooks; }
  static constexpr int kMaxToolRounds = 5;

  // The tools of the pipeline's MCP servers, offered beside plugin tools (a name a plugin tool
  // has goes to the plugin). Before Run; may be null.
  void SetMcpTools(domain::McpTools* tools) { mcp_ = tools; }

  // Passages from the pipeline's knowledge bases go with each message, at most `budget_chars`
  // characters of them, best first; the model is told their source files. Before Run; may be
  // null (knowledge bases are then ignored, and the event log says so).
  void SetKnowledge(domain::KnowledgeRetriever* retriever, std::size_t budget_chars) {
    knowledge_ = retriever;
    knowledge_budget_ = budget_chars;
  }

 private:
  struct Call;
  void TryModel(std::shared_ptr<Call> call, std::size_t index);
  void Remember(const std::shared_ptr<Call>& call, AgentReply reply);
  void AddKnowledge(Call& call);
  void RunTools(std::shared_ptr<Call> call, std::size_t index, domain::ChatMessage request);

  domain::LlmGateway& gateway_;
  domain::ModelResolver& models_;
  domain::ConversationRepository& memory_;
  util::BlockingExecutor& blocking_;
  const util::Clock& clock_;
  domain::PluginHooks* plugins_ = nullptr;
  domain::McpTools* mcp_ = nullptr;
  domain::KnowledgeRetriever* knowledge_ = nullptr;
  std::size_t knowledge_budget_ = 6000;
};

// The user's message with retrieved passages, in LangBot's wording (the model is told to use
// them and to answer in the user's language), each passage numbered and named by its file; at
// most `budget_chars` characters of passages. Empty when no passage fits.
std::string WithKnowledge(const std::string& user_text,
                          const std::vector<domain::RetrievedPassage>& passages,
                          std::size_t budget_chars, std::size_t* used = nullptr);

}  // namespace sb::pipeline
