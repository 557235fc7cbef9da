// The local-agent runner over real SQLite conversation memory, a scripted gateway and a table of
// models: what each model is sent, fallbacks, memory bounds and images for blind models.
#include <gtest/gtest.h>

#include <map>

#include "domain/plugin_hooks.hpp"
#include "pipeline/local_agent_runner.hpp"
#include "storage/sqlite/sqlite_storage.hpp"
#include "support/bot_storage.hpp"
#include "util/crypto.hpp"
#include "util/simulated_clock.hpp"

namespace sb::pipeline {
namespace {

using util::ErrorCode;

// Time stands still: nothing here waits.
using FixedClock = util::SimulatedClock;

class InlineExecutor final : public util::BlockingExecutor {
 public:
  void Post(std::function<void()> task) override { task(); }
};

class TableResolver final : public domain::ModelResolver {
 public:
  util::Result<domain::ModelRoute> Resolve(const std::string& uuid) override {
    auto it = routes.find(uuid);
    if (it == routes.end()) return util::Fail(ErrorCode::kNotFound, "no model " + uuid);
    return it->second;
  }
  std::map<std::string, domain::ModelRoute> routes;
};

// Answers "reply <n>" for model ids it knows; fails for ids listed in `failing`.
class ScriptedGateway final : public domain::LlmGateway {
 public:
  std::shared_ptr<domain::CallHandle> Chat(
      const domain::ProviderEndpoint&, domain::ChatRequest request,
      std::function<void(const domain::ChatDelta&)> on_delta,
      std::function<void(util::Result<domain::ChatResult>)> done) override {
    requests.push_back(request);
    if (failing.count(request.model)) {
      done(util::Fail(ErrorCode::kUpstreamFailed, "provider answered 500"));
      return nullptr;
    }
    domain::ChatResult r;
    if (!call_tools.empty() && !request.tools.empty() && request.messages.back().role != "tool") {
      for (const auto& name : call_tools) {
        r.tool_calls.push_back({"call-" + name, name, R"({"q":1})"});
      }
      done(r);
      return nullptr;
    }
    r.content = "reply " + std::to_string(requests.size());
    if (on_delta) on_delta({r.content});
    done(r);
    return nullptr;
  }
  std::shared_ptr<domain::CallHandle> Embed(
      const domain::ProviderEndpoint&, domain::EmbeddingRequest,
      std::function<void(util::Result<domain::EmbeddingResult>)> done) override {
    done(util::Fail(ErrorCode::kInvalidArgument, "not used"));
    return nullptr;
  }
  std::vector<domain::ChatRequest> requests;
  std::set<std::string> failing;
  std::vector<std::string> call_tools;  // called when tools are offered, then "reply <n>"
};

std::string TextOf(const domain::ChatMessage& m) {
  std::string out;
  for (const auto& p : m.content)
    out += p.kind == domain::ContentPart::Kind::kText ? p.text : "<img>";
  return out;
}

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<test::BotStorage>("agent");
    storage_ = &db_->storage();
    key_ = {db_->pipeline(), db_->bot(), "person_42"};
    resolver_.routes["m-primary"] = {
        {"openai-chat-completions", "http://x", {}}, "primary", {}, {}};
    resolver_.routes["m-tools"] = {
        {"openai-chat-completions", "http://x", {}}, "tools", {}, {"chat", "func_call"}};
    resolver_.routes["m-fallback"] = {
        {"openai-chat-completions", "http://x", {}}, "fallback", {}, {"chat", "vision"}};
    runner_ = std::make_unique<LocalAgentRunner>(gateway_, resolver_, storage_->conversations(),
                                                 executor_, clock_);
  }
  void TearDown() override {
    runner_.reset();
    db_.reset();
  }

  util::JsonObject Config(const std::string& model_json, int max_round = 10) {
    return util::ParseJson(R"({"ai":{"local-agent":{"model":)" + model_json + R"(,"max-round":)" +
                           std::to_string(max_round) +
                           R"(,"prompt":[{"role":"system","content":"Be brief."}]}}})")
        ->as_object();
  }

  util::Result<AgentReply> Say(const util::JsonObject& config, const std::string& text,
                               bool with_image = false) {
    AgentInput in{key_, {{domain::ContentPart::Kind::kText, text, {}}}, nullptr};
    if (with_image) in.content.push_back({domain::ContentPart::Kind::kImage, {}, "http://i/1.png"});
    std::optional<util::Result<AgentReply>> out;
    runner_->Run(config, in, nullptr, [&](util::Result<AgentReply> r) { out = std::move(r); });
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : util::Fail(ErrorCode::kInternal, "no answer");
  }

  std::unique_ptr<test::BotStorage> db_;
  FixedClock clock_{util::FromUnixMillis(1'790'000'000'000)};
  InlineExecutor executor_;
  storage::sqlite::SqliteStorage* storage_ = nullptr;
  domain::ConversationKey key_;
  TableResolver resolver_;
  ScriptedGateway gateway_;
  std::unique_ptr<LocalAgentRunner> runner_;
};

TEST(AgentSettings, ReadsPrimaryFallbacksRoundsAndPrompt) {
  auto s = ReadAgentSettings(
      util::ParseJson(R"({"ai":{"local-agent":{"model":{"primary":"a","fallbacks":["b","",3]},
          "max-round":4,"prompt":[{"role":"system","content":"x"},{"role":"system","content":""}]}}})")
          ->as_object());
  EXPECT_EQ(s.models, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.max_rounds, 4);
  ASSERT_EQ(s.prompt.size(), 1u);
  // LangBot's older form: the model as a plain uuid.
  auto old =
      ReadAgentSettings(util::ParseJson(R"({"ai":{"local-agent":{"model":"a"}}})")->as_object());
  EXPECT_EQ(old.models, (std::vector<std::string>{"a"}));
  EXPECT_TRUE(ReadAgentSettings({}).models.empty());
}

TEST_F(AgentTest, SecondTurnCarriesTheFirstRound) {
  auto config = Config(R"({"primary":"m-primary","fallbacks":[]})");
  auto first = Say(config, "hello");
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->text, "reply 1");
  ASSERT_TRUE(Say(config, "again"));
  const auto& sent = gateway_.requests.back().messages;
  ASSERT_EQ(sent.size(), 4u);  // system, user, assistant, user
  EXPECT_EQ(sent[0].role, "system");
  EXPECT_EQ(TextOf(sent[1]), "hello");
  EXPECT_EQ(TextOf(sent[2]), "reply 1");
  EXPECT_EQ(TextOf(sent[3]), "again");
  EXPECT_EQ(gateway_.requests.back().model, "primary");
}

TEST_F(AgentTest, MemoryKeepsOnlyMaxRounds) {
  auto config = Config(R"("m-primary")", /*max_round=*/1);
  for (const char* t : {"one", "two", "three"}) ASSERT_TRUE(Say(config, t));
  const auto& sent = gateway_.requests.back().messages;
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(TextOf(sent[1]), "two");
  ASSERT_TRUE(storage_->conversations().Clear(key_));
  ASSERT_TRUE(Say(config, "after reset"));
  EXPECT_EQ(gateway_.requests.back().messages.size(), 2u);
}

TEST_F(AgentTest, FailingPrimaryFallsBackAndBlindModelsGetNoImages) {
  gateway_.failing.insert("primary");
  auto r = Say(Config(R"({"primary":"m-primary","fallbacks":["m-missing","m-fallback"]})"), "look",
               /*with_image=*/true);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->model_uuid, "m-fallback");
  ASSERT_EQ(gateway_.requests.size(), 2u);
  EXPECT_EQ(TextOf(gateway_.requests[0].messages.back()), "look[image]");  // primary: no vision
  EXPECT_EQ(TextOf(gateway_.requests[1].messages.back()), "look<img>");    // fallback: vision
}

TEST_F(AgentTest, BlindModelsGetNoImagesFromEarlierRoundsEither) {
  auto vision = Config(R"("m-fallback")");
  ASSERT_TRUE(Say(vision, "see this", /*with_image=*/true));
  ASSERT_TRUE(Say(Config(R"("m-primary")"), "and now?"));
  for (const auto& m : gateway_.requests.back().messages) {
    for (const auto& part : m.content) EXPECT_NE(part.kind, domain::ContentPart::Kind::kImage);
  }
  EXPECT_EQ(TextOf(gateway_.requests.back().messages[1]), "see this[image]");
}

// A plugin listening to before_model_request that rewrites the prompt with `edit`.
class PromptEditor final : public domain::PluginHooks {
 public:
  explicit PromptEditor(std::function<util::JsonArray(util::JsonArray)> edit)
      : edit_(std::move(edit)) {}
  void MessageReceived(const domain::PluginBinding&, util::JsonObject,
                       std::function<void(std::optional<domain::PluginEventReply>)> done) override {
    done(std::nullopt);
  }
  void Command(const domain::PluginBinding&, const std::string&, util::JsonObject,
               std::function<void(std::optional<util::Result<std::string>>)> done) override {
    done(std::nullopt);
  }
  std::vector<std::pair<std::string, std::string>> Commands(const domain::PluginBinding&) override {
    return {};
  }
  bool Listens(const domain::PluginBinding&, const std::string& event) override {
    return event == "before_model_request";
  }
  void Transform(const domain::PluginBinding&, const std::string&, util::JsonObject data,
                 const std::string& key, std::function<void(util::JsonObject)> done) override {
    seen = data[key].as_array();
    data[key] = edit_(seen);
    done(std::move(data));
  }
  std::vector<domain::ToolSpec> Tools(const domain::PluginBinding&) override { return {}; }
  void CallTool(const domain::PluginBinding&, const std::string&, const std::string&,
                std::function<void(util::Result<std::string>)> done) override {
    done(util::Fail(ErrorCode::kNotFound, "no tools"));
  }
  util::JsonArray seen;

 private:
  std::function<util::JsonArray(util::JsonArray)> edit_;
};

TEST_F(AgentTest, RewrittenPromptKeepsTheImagesOfKeptAndEditedUserMessages) {
  auto vision = Config(R"("m-fallback")");
  ASSERT_TRUE(Say(vision, "first", /*with_image=*/true));
  // Prepends a rule and edits the new user message; the remembered round is kept as it was.
  PromptEditor editor([](util::JsonArray messages) {
    util::JsonArray out{util::JsonObject{{"role", "system"}, {"content", "Be a pirate."}}};
    for (auto& m : messages) out.push_back(m);
    auto& last = out.back().as_object();
    last["content"] = std::string(last["content"].as_string()) + " (edited)";
    return out;
  });
  runner_->SetPluginHooks(&editor);
  ASSERT_TRUE(Say(vision, "second", /*with_image=*/true));

  // Plugins see texts and image counts, never the image data.
  ASSERT_EQ(editor.seen.size(), 4u);
  EXPECT_EQ(editor.seen[1].as_object().at("content").as_string(), "first");
  EXPECT_EQ(editor.seen[1].as_object().at("images").as_int64(), 1);
  EXPECT_EQ(editor.seen[2].as_object().if_contains("images"), nullptr);

  const auto& sent = gateway_.requests.back().messages;
  ASSERT_EQ(sent.size(), 5u);
  EXPECT_EQ(TextOf(sent[0]), "Be a pirate.");
  EXPECT_EQ(TextOf(sent[1]), "Be brief.");
  EXPECT_EQ(TextOf(sent[2]), "first<img>") << "a kept message keeps its image";
  EXPECT_EQ(TextOf(sent[3]), "reply 1");
  EXPECT_EQ(TextOf(sent[4]), "second (edited)<img>") << "the edited new message keeps its image";
  EXPECT_EQ(sent[4].content[1].image_url, "http://i/1.png");

  // A plugin answering something that is not a message list leaves the prompt as it was.
  PromptEditor broken([](util::JsonArray) { return util::JsonArray{1, 2}; });
  runner_->SetPluginHooks(&broken);
  ASSERT_TRUE(Say(vision, "third"));
  EXPECT_EQ(TextOf(gateway_.requests.back().messages.front()), "Be brief.");
  runner_->SetPluginHooks(nullptr);
}

// Offers `names` as plugin tools (or MCP tools) and answers each call with "<source>:<name>".
class ToolPlugin final : public domain::PluginHooks {
 public:
  void MessageReceived(const domain::PluginBinding&, util::JsonObject,
                       std::function<void(std::optional<domain::PluginEventReply>)> done) override {
    done(std::nullopt);
  }
  void Command(const domain::PluginBinding&, const std::string&, util::JsonObject,
               std::function<void(std::optional<util::Result<std::string>>)> done) override {
    done(std::nullopt);
  }
  std::vector<std::pair<std::string, std::string>> Commands(const domain::PluginBinding&) override {
    return {};
  }
  bool Listens(const domain::PluginBinding&, const std::string&) override { return false; }
  void Transform(const domain::PluginBinding&, const std::string&, util::JsonObject data,
                 const std::string&, std::function<void(util::JsonObject)> done) override {
    done(std::move(data));
  }
  std::vector<domain::ToolSpec> Tools(const domain::PluginBinding&) override {
    return {{"shared", "plugin's", {}}, {"p_only", "", {}}};
  }
  void CallTool(const domain::PluginBinding&, const std::string& name, const std::string&,
                std::function<void(util::Result<std::string>)> done) override {
    done("plugin:" + name);
  }
};

class ToolServers final : public domain::McpTools {
 public:
  std::vector<domain::ToolSpec> Tools(const domain::McpBinding& binding) override {
    seen = binding;
    return {{"shared", "server's", {}}, {"m_only", "", {}}};
  }
  void CallTool(const domain::McpBinding&, const std::string& name, const std::string& arguments,
                std::function<void(util::Result<std::string>)> done) override {
    done("mcp:" + name + arguments);
  }
  domain::McpBinding seen;
};

TEST_F(AgentTest, McpToolsAreOfferedBesidePluginToolsAndAPluginKeepsItsName) {
  ToolPlugin plugin;
  ToolServers servers;
  runner_->SetPluginHooks(&plugin);
  runner_->SetMcpTools(&servers);
  auto config = Config(R"("m-tools")");
  config["_extensions_preferences"] =
      util::JsonObject{{"enable_all_mcp_servers", false}, {"mcp_servers", util::JsonArray{"a"}}};
  gateway_.call_tools = {"shared", "m_only"};
  auto r = Say(config, "use tools");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(gateway_.requests.size(), 2u);
  std::vector<std::string> offered;
  for (const auto& t : gateway_.requests[0].tools) offered.push_back(t.name + "/" + t.description);
  EXPECT_EQ(offered, (std::vector<std::string>{"shared/plugin's", "p_only/", "m_only/"}));
  EXPECT_FALSE(servers.seen.all_servers);
  EXPECT_EQ(servers.seen.servers, (std::vector<std::string>{"a"}));
  const auto& sent = gateway_.requests[1].messages;
  ASSERT_GE(sent.size(), 3u);
  EXPECT_EQ(TextOf(sent[sent.size() - 2]), "plugin:shared");
  EXPECT_EQ(TextOf(sent.back()), R"(mcp:m_only{"q":1})");
  EXPECT_EQ(sent.back().tool_call_id, "call-m_only");
  runner_->SetPluginHooks(nullptr);
  runner_->SetMcpTools(nullptr);

  // Without plugins, MCP tools alone are offered; a model without func_call gets none.
  runner_->SetMcpTools(&servers);
  gateway_.call_tools.clear();
  ASSERT_TRUE(Say(config, "again"));
  EXPECT_EQ(gateway_.requests.back().tools.size(), 2u);
  ASSERT_TRUE(Say(Config(R"("m-primary")"), "blind"));
  EXPECT_TRUE(gateway_.requests.back().tools.empty());
  runner_->SetMcpTools(nullptr);
}

TEST_F(AgentTest, AllModelsFailingGivesTheLastError) {
  gateway_.failing = {"primary", "fallback"};
  auto r = Say(Config(R"({"primary":"m-primary","fallbacks":["m-fallback"]})"), "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUpstreamFailed);
  // Nothing was remembered from a failed turn.
  gateway_.failing.clear();
  ASSERT_TRUE(Say(Config(R"("m-primary")"), "y"));
  EXPECT_EQ(gateway_.requests.back().messages.size(), 2u);
}

TEST_F(AgentTest, NoModelConfiguredIsInvalidArgument) {
  auto r = Say(Config(R"({"primary":"","fallbacks":[]})"), "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(gateway_.requests.empty());
}

}  // namespace
}  // namespace sb::pipeline
