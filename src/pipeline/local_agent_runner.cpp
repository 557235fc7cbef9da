#include "pipeline/local_agent_runner.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <set>

#include "util/utf8.hpp"

namespace sb::pipeline {
namespace {

using util::ErrorCode;

const util::JsonObject* ObjectAt(const util::JsonObject& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_object() ? &it->value().as_object() : nullptr;
}

// Failures another model may not share: the provider, the key, the model, the network.
bool WorthAFallback(const util::Error& e) {
  switch (e.code) {
    case ErrorCode::kUpstreamFailed:
    case ErrorCode::kUpstreamTimeout:
    case ErrorCode::kUpstreamAuth:
    case ErrorCode::kUpstreamNotFound:
    case ErrorCode::kUpstreamRateLimited:
    case ErrorCode::kUpstreamUnreachable:
    case ErrorCode::kNotFound:  // the model was deleted
      return true;
    default:
      return false;
  }
}

}  // namespace

AgentSettings ReadAgentSettings(const util::JsonObject& config) {
  AgentSettings s;
  const auto* ai = ObjectAt(config, "ai");
  const auto* agent = ai ? ObjectAt(*ai, "local-agent") : nullptr;
  if (!agent) return s;
  if (auto it = agent->find("model"); it != agent->end()) {
    const auto& m = it->value();
    if (m.is_string() && !m.as_string().empty()) {
      s.models.emplace_back(m.as_string());
    } else if (m.is_object()) {
      const auto& obj = m.as_object();
      if (auto p = obj.find("primary");
          p != obj.end() && p->value().is_string() && !p->value().as_string().empty()) {
        s.models.emplace_back(p->value().as_string());
      }
      if (auto f = obj.find("fallbacks"); f != obj.end() && f->value().is_array()) {
        for (const auto& v : f->value().as_array()) {
          if (v.is_string() && !v.as_string().empty()) s.models.emplace_back(v.as_string());
        }
      }
    }
  }
  if (auto it = agent->find("max-round"); it != agent->end() && it->value().is_int64()) {
    s.max_rounds = static_cast<int>(std::clamp<std::int64_t>(it->value().as_int64(), 0, 1000));
  }
  if (auto it = agent->find("knowledge-bases"); it != agent->end() && it->value().is_array()) {
    for (const auto& v : it->value().as_array()) {
      if (v.is_string() && !v.as_string().empty()) s.knowledge_bases.emplace_back(v.as_string());
    }
  } else if (auto one = agent->find("knowledge-base");
             one != agent->end() && one->value().is_string() && !one->value().as_string().empty() &&
             one->value().as_string() != "__none__") {
    s.knowledge_bases.emplace_back(one->value().as_string());
  }
  if (auto it = agent->find("prompt"); it != agent->end() && it->value().is_array()) {
    for (const auto& p : it->value().as_array()) {
      if (!p.is_object()) continue;
      const auto& obj = p.as_object();
      auto role = obj.find("role");
      auto content = obj.find("content");
      if (role == obj.end() || content == obj.end() || !role->value().is_string() ||
          !content->value().is_string() || content->value().as_string().empty()) {
        continue;
      }
      domain::ChatMessage m;
      m.role = std::string(role->value().as_string());
      if (m.role != "system" && m.role != "user" && m.role != "assistant") m.role = "system";
      m.content.push_back(
          {domain::ContentPart::Kind::kText, std::string(content->value().as_string()), {}});
      s.prompt.push_back(std::move(m));
    }
  }
  return s;
}

struct LocalAgentRunner::Call {
  AgentSettings settings;
  domain::ConversationKey key;
  std::vector<domain::ChatMessage> history;
  domain::ChatMessage user;
  std::function<void(const domain::ChatDelta&)> on_delta;
  std::function<void(util::Result<AgentReply>)> done;
  std::function<void(const std::vector<std::string>&)> on_tool_calls;
  std::atomic<bool> delivered{false};  // text reached the caller: no fallback may repeat it
  util::Error last_error{ErrorCode::kInternal, "no model answered"};
  domain::PluginBinding binding;
  domain::McpBinding mcp_binding;
  // The names offered to the model in the last request that MCP servers serve (the rest are
  // plugins').
  std::set<std::string, std::less<>> mcp_tool_names;
  // The tool exchange of this message (assistant tool calls and their results), sent after the
  // user's message; not remembered.
  std::vector<domain::ChatMessage> exchange;
  int tool_rounds = 0;
  // Set when a plugin rewrote the prompt (before_model_request): sent instead of prompt,
  // history and the user's message.
  std::optional<std::vector<domain::ChatMessage>> rewritten;
  // The user's text with retrieved passages, sent in place of the message's text (memory keeps
  // the message as the user wrote it).
  std::optional<std::string> with_knowledge;
  std::vector<std::string> notes;
};

namespace {

std::string TextOf(const domain::ChatMessage& m) {
  std::string text;
  for (const auto& part : m.content) {
    if (part.kind == domain::ContentPart::Kind::kText) text += part.text;
  }
  return text;
}

std::size_t ImagesIn(const domain::ChatMessage& m) {
  return static_cast<std::size_t>(std::count_if(m.content.begin(), m.content.end(), [](auto& p) {
    return p.kind == domain::ContentPart::Kind::kImage;
  }));
}

// What plugins see of the prompt: each message's text and how many images it has (images stay
// in the core: a data URL can be megabytes, and plugins rewrite text).
util::JsonArray MessagesJson(const std::vector<domain::ChatMessage>& messages) {
  util::JsonArray out;
  for (const auto& m : messages) {
    util::JsonObject o{{"role", m.role}, {"content", TextOf(m)}};
    if (const auto images = ImagesIn(m); images > 0)
      o["images"] = static_cast<std::int64_t>(images);
    out.push_back(std::move(o));
  }
  return out;
}

// A plugin's rewritten messages; nullopt when they are not a list of {role, content} texts.
// Messages the plugin kept (same role and text, in order) are the ones `sent`, images and all;
// the new user message (the last of `sent`), when edited, keeps its images after the new text
// of the last edited user message. Other edited or added messages are text.
std::optional<std::vector<domain::ChatMessage>> MessagesFrom(
    const util::Json& value, const std::vector<domain::ChatMessage>& sent) {
  if (!value.is_array() || value.as_array().empty()) return std::nullopt;
  std::vector<domain::ChatMessage> out;
  std::vector<bool> edited;
  std::size_t next = 0;  // kept messages are looked for in order
  bool kept_last = false;
  for (const auto& item : value.as_array()) {
    const auto* o = item.if_object();
    const auto* role = o ? o->if_contains("role") : nullptr;
    const auto* content = o ? o->if_contains("content") : nullptr;
    if (!role || !content || !role->is_string() || !content->is_string()) return std::nullopt;
    const std::string_view r = role->as_string();
    if (r != "system" && r != "user" && r != "assistant") return std::nullopt;
    const std::string_view text = content->as_string();
    auto same = std::find_if(
        sent.begin() + static_cast<std::ptrdiff_t>(std::min(next, sent.size())), sent.end(),
        [&](const domain::ChatMessage& m) { return m.role == r && TextOf(m) == text; });
    if (same != sent.end()) {
      next = static_cast<std::size_t>(same - sent.begin()) + 1;
      kept_last = kept_last || next == sent.size();
      out.push_back(*same);
      edited.push_back(false);
      continue;
    }
    domain::ChatMessage m;
    m.role = std::string(r);
    m.content.push_back({domain::ContentPart::Kind::kText, std::string(text), {}});
    out.push_back(std::move(m));
    edited.push_back(true);
  }
  if (!kept_last && !sent.empty() && ImagesIn(sent.back()) > 0) {
    for (std::size_t i = out.size(); i-- > 0;) {
      if (!edited[i] || out[i].role != "user") continue;
      for (const auto& part : sent.back().content) {
        if (part.kind == domain::ContentPart::Kind::kImage) out[i].content.push_back(part);
      }
      break;
    }
  }
  return out;
}

}  // namespace

LocalAgentRunner::LocalAgentRunner(domain::LlmGateway& gateway, domain::ModelResolver& models,
                                   domain::ConversationRepository& memory,
                                   util::BlockingExecutor& blocking, const util::Clock& clock)
    : gateway_(gateway), models_(models), memory_(memory), blocking_(blocking), clock_(clock) {}

void LocalAgentRunner::Run(const util::JsonObject& pipeline_config, AgentInput input,
                           std::function<void(const domain::ChatDelta&)> on_delta,
                           std::function<void(util::Result<AgentReply>)> done) {
  auto call = std::make_shared<Call>();
  call->settings = ReadAgentSettings(pipeline_config);
  if (call->settings.models.empty()) {
    return done(util::Fail(ErrorCode::kInvalidArgument,
                           "the pipeline has no model (ai.local-agent.model.primary)"));
  }
  call->key = std::move(input.conversation);
  call->user.role = "user";
  call->user.content = std::move(input.content);
  call->on_delta = std::move(on_delta);
  call->on_tool_calls = std::move(input.on_tool_calls);
  call->done = std::move(done);
  call->binding = domain::PluginBinding::FromPipelineConfig(pipeline_config);
  call->mcp_binding = domain::McpBinding::FromPipelineConfig(pipeline_config);
  auto history = memory_.Load(call->key, call->settings.max_rounds);
  if (!history) return call->done(tl::unexpected(history.error()));
  for (auto& turn : *history) call->history.push_back(std::move(turn.message));
  AddKnowledge(*call);
  if (plugins_ && plugins_->Listens(call->binding, "before_model_request")) {
    std::vector<domain::ChatMessage> all = call->settings.prompt;
    all.insert(all.end(), call->history.begin(), call->history.end());
    all.push_back(call->user);
    util::JsonObject data{{"session_id", call->key.session_id},
                          {"pipeline_uuid", call->key.pipeline.str()},
                          {"bot_uuid", call->key.bot.str()},
                          {"messages", MessagesJson(all)}};
    plugins_->Transform(call->binding, "before_model_request", std::move(data), "messages",
                        [this, call, all = std::move(all)](util::JsonObject edited) {
                          if (const auto* m = edited.if_contains("messages")) {
                            call->rewritten = MessagesFrom(*m, all);
                          }
                          blocking_.Post([this, call] { TryModel(call, 0); });
                        });
    return;
  }
  TryModel(std::move(call), 0);
}

// On a thread that may block: resolve model `index` and call it.
void LocalAgentRunner::TryModel(std::shared_ptr<Call> call, std::size_t index) {
  if (index >= call->settings.models.size()) return call->done(tl::unexpected(call->last_error));
  const std::string& uuid = call->settings.models[index];
  auto route = models_.Resolve(uuid);
  if (!route) {
    call->last_error = {route.error().code,
                        fmt::format("model {}: {}", uuid, route.error().message)};
    return TryModel(std::move(call), index + 1);
  }
  domain::ChatRequest request;
  request.model = route->model_id;
  request.extra_args = route->extra_args;
  request.stream = static_cast<bool>(call->on_delta);
  request.origin = {call->key.bot.str(), call->key.pipeline.str(), call->key.session_id};
  request.messages = call->settings.prompt;
  request.messages.insert(request.messages.end(), call->history.begin(), call->history.end());
  domain::ChatMessage user = call->user;
  if (call->with_knowledge) {
    // The passages and the question replace the message's text; its images stay.
    std::vector<domain::ContentPart> parts{
        {domain::ContentPart::Kind::kText, *call->with_knowledge, {}}};
    for (auto& part : user.content) {
      if (part.kind != domain::ContentPart::Kind::kText) parts.push_back(std::move(part));
    }
    user.content = std::move(parts);
  }
  // A model without vision gets a note in place of each image rather than a refusal.
  const bool vision = std::find(route->abilities.begin(), route->abilities.end(), "vision") !=
                      route->abilities.end();
  if (!vision) {
    for (auto& part : user.content) {
      if (part.kind == domain::ContentPart::Kind::kImage) {
        part = {domain::ContentPart::Kind::kText, "[image]", {}};
      }
    }
  }
  request.messages.push_back(std::move(user));
  if (call->rewritten) request.messages = *call->rewritten;
  request.messages.insert(request.messages.end(), call->exchange.begin(), call->exchange.end());
  const bool tools = (plugins_ || mcp_) && call->tool_rounds < kMaxToolRounds &&
                     std::find(route->abilities.begin(), route->abilities.end(), "func_call") !=
                         route->abilities.end();
  call->mcp_tool_names.clear();
  if (tools && plugins_) request.tools = plugins_->Tools(call->binding);
  if (tools && mcp_) {
    std::set<std::string, std::less<>> taken;
    for (const auto& t : request.tools) taken.insert(t.name);
    for (auto& t : mcp_->Tools(call->mcp_binding)) {
      if (!taken.insert(t.name).second) continue;  // a plugin's tool of that name wins
      call->mcp_tool_names.insert(t.name);
      request.tools.push_back(std::move(t));
    }
  }
  const bool offered = !request.tools.empty();
  if (!vision) {
    // Earlier rounds may hold images too (remembered as sent); a blind model gets none of them.
    for (auto& message : request.messages) {
      for (auto& part : message.content) {
        if (part.kind == domain::ContentPart::Kind::kImage) {
          part = {domain::ContentPart::Kind::kText, "[image]", {}};
        }
      }
    }
  }
  std::function<void(const domain::ChatDelta&)> on_delta;
  if (call->on_delta) {
    on_delta = [call](const domain::ChatDelta& d) {
      call->delivered = true;
      call->on_delta(d);
    };
  }
  gateway_.Chat(route->endpoint, std::move(request), std::move(on_delta),
                [this, call, index, uuid, offered](util::Result<domain::ChatResult> r) {
                  if (r && offered && !r->tool_calls.empty()) {
                    domain::ChatMessage asked;
                    asked.role = "assistant";
                    if (!r->content.empty()) {
                      asked.content.push_back({domain::ContentPart::Kind::kText, r->content, {}});
                    }
                    asked.tool_calls = r->tool_calls;
                    return RunTools(call, index, std::move(asked));
                  }
                  if (r) {
                    AgentReply reply{r->content, uuid, r->usage, call->notes};
                    blocking_.Post([this, call, reply = std::move(reply)]() mutable {
                      Remember(call, std::move(reply));
                    });
                    return;
                  }
                  call->last_error = r.error();
                  if (call->delivered || !WorthAFallback(r.error())) {
                    return call->done(tl::unexpected(r.error()));
                  }
                  spdlog::warn("model {} failed ({}); trying the next one", uuid,
                               r.error().message);
                  blocking_.Post([this, call, index] { TryModel(call, index + 1); });
                });
}

// The model called tools: each is run by the plugin offering it, in order, and the results go
// back to the same model. A failing tool answers the model with the error, not the user.
void LocalAgentRunner::RunTools(std::shared_ptr<Call> call, std::size_t index,
                                domain::ChatMessage asked) {
  ++call->tool_rounds;
  if (call->on_tool_calls) {
    std::vector<std::string> names;
    for (const auto& t : asked.tool_calls) names.push_back(t.name);
    call->on_tool_calls(names);
  }
  auto calls = std::make_shared<std::vector<domain::ToolCall>>(asked.tool_calls);
  call->exchange.push_back(std::move(asked));
  auto next = std::make_shared<std::function<void(std::size_t)>>();
  *next = [this, call, index, calls,
           weak = std::weak_ptr<std::function<void(std::size_t)>>(next)](std::size_t i) {
    if (i == calls->size()) {
      blocking_.Post([this, call, index] { TryModel(call, index); });
      return;
    }
    auto self = weak.lock();
    const domain::ToolCall& tool = (*calls)[i];
    auto answered = [call, calls, i, self](util::Result<std::string> result) {
      domain::ChatMessage answer;
      answer.role = "tool";
      answer.tool_call_id = (*calls)[i].id;
      answer.content.push_back({domain::ContentPart::Kind::kText,
                                result ? *result : "error: " + result.error().message,
                                {}});
      call->exchange.push_back(std::move(answer));
      (*self)(i + 1);
    };
    if (call->mcp_tool_names.contains(tool.name)) {
      mcp_->CallTool(call->mcp_binding, tool.name, tool.arguments, std::move(answered));
    } else if (plugins_) {
      plugins_->CallTool(call->binding, tool.name, tool.arguments, std::move(answered));
    } else {
      answered(util::Fail(ErrorCode::kNotFound,
                          fmt::format("no tool named '{}' is offered", tool.name)));
    }
  };
  (*next)(0);
}

// On a thread that may block: store the round, then answer. A reply is worth more than its
// memory, so a failed write is logged and the reply still goes out.
void LocalAgentRunner::Remember(const std::shared_ptr<Call>& call, AgentReply reply) {
  const auto now = clock_.Now();
  domain::ChatMessage assistant;
  assistant.role = "assistant";
  assistant.content.push_back({domain::ContentPart::Kind::kText, reply.text, {}});
  std::vector<domain::ConversationTurn> turns{{call->user, now}, {std::move(assistant), now}};
  if (auto stored = memory_.Append(call->key, turns, call->settings.max_rounds); !stored) {
    spdlog::warn("could not remember a round of {}: {}", call->key.session_id,
                 stored.error().message);
  }
  call->done(std::move(reply));
}

// On a thread that may block: the passages of the pipeline's knowledge bases for this message.
// A failed retrieval costs the message its passages, not its answer.
void LocalAgentRunner::AddKnowledge(Call& call) {
  const auto& bases = call.settings.knowledge_bases;
  if (bases.empty()) return;
  const std::string text = TextOf(call.user);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return;
  if (!knowledge_) {
    call.notes.push_back("knowledge bases are configured but this server has none available");
    return;
  }
  auto passages = knowledge_->RetrieveForMessage(bases, text);
  if (!passages) {
    call.notes.push_back("knowledge retrieval failed, answered without it: " +
                         passages.error().message);
    return;
  }
  if (passages->empty()) {
    call.notes.push_back("knowledge: no passage scored above the threshold; answered without");
    return;
  }
  std::size_t used = 0;
  std::string augmented = WithKnowledge(text, *passages, knowledge_budget_, &used);
  if (used == 0) {
    call.notes.push_back(
        fmt::format("knowledge: the best passage is longer than the context budget ({} characters, "
                    "knowledge.context_budget_chars); answered without",
                    knowledge_budget_));
    return;
  }
  std::string note = fmt::format("knowledge: {} passage(s) given to the model:", used);
  for (std::size_t i = 0; i < used; ++i) {
    note +=
        fmt::format("{} {} ({:.2f})", i ? "," : "", (*passages)[i].file_name, (*passages)[i].score);
  }
  call.notes.push_back(std::move(note));
  call.with_knowledge = std::move(augmented);
}

std::string WithKnowledge(const std::string& user_text,
                          const std::vector<domain::RetrievedPassage>& passages,
                          std::size_t budget_chars, std::size_t* used) {
  std::string context;
  std::size_t spent = 0;
  std::size_t count = 0;
  for (const auto& p : passages) {
    std::size_t length = 0;
    for (std::size_t i = 0; i < p.text.size();) {
      char32_t cp = 0;
      i += util::NextCodePoint(p.text, i, cp);
      ++length;
    }
    if (spent + length > budget_chars) break;
    spent += length;
    ++count;
    if (!context.empty()) context += "\n\n";
    context += fmt::format("[{}] (from {})\n{}", count, p.file_name, p.text);
  }
  if (used) *used = count;
  if (count == 0) return {};
  return fmt::format(
      "The following are relevant context entries retrieved from the knowledge base. \n"
      "Please use them to answer the user's message. \n"
      "Respond in the same language as the user's input.\n\n"
      "<context>\n{}\n</context>\n\n<user_message>\n{}\n</user_message>\n",
      context, user_text);
}

}  // namespace sb::pipeline
