// McpSessionManager over scripted in-process sessions on a real I/O context: which server's tool
// a name reaches (binding, name order, names models cannot take), restarts with backoff after a
// failed start or a server that went away, and the errors a caller gets.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <future>
#include <thread>

#include "mcp/session_manager.hpp"

namespace sb::mcp {
namespace {

using util::ErrorCode;

// What the scripted sessions of one server do; shared with the test.
struct Script {
  std::vector<std::string> tools;
  std::atomic<int> failing_starts{0};  // Initialize fails this many more times
  std::atomic<int> made{0};
  std::atomic<bool> alive{true};
  std::mutex mutex;
  std::vector<std::string> calls;  // "<tool> <arguments>"
};

class ScriptedSession final : public Session {
 public:
  ScriptedSession(std::string server, std::shared_ptr<Script> script)
      : server_(std::move(server)), script_(std::move(script)) {}
  boost::asio::awaitable<util::Result<void>> Initialize() override {
    if (script_->failing_starts.fetch_sub(1) > 0) {
      co_return util::Fail(ErrorCode::kUpstreamUnreachable, "connection refused");
    }
    co_return util::Ok();
  }
  boost::asio::awaitable<util::Result<std::vector<Tool>>> ListTools() override {
    std::vector<Tool> out;
    for (const auto& t : script_->tools) out.push_back({t, "tool " + t, {}});
    co_return out;
  }
  boost::asio::awaitable<util::Result<ToolResult>> CallTool(const std::string& name,
                                                            util::JsonObject arguments,
                                                            std::chrono::milliseconds) override {
    std::lock_guard lock(script_->mutex);
    script_->calls.push_back(name + " " + util::SerializeJson(arguments));
    co_return ToolResult{server_ + ":" + name, name == "broken"};
  }
  boost::asio::awaitable<util::Result<void>> Ping() override { co_return util::Ok(); }
  boost::asio::awaitable<void> Close() override { co_return; }
  bool tools_changed() const override { return false; }
  bool alive() const override { return script_->alive; }
  const std::string& protocol_version() const override { return version_; }

 private:
  std::string server_;
  std::shared_ptr<Script> script_;
  std::string version_ = "2025-06-18";
};

class MemoryRepo final : public domain::McpServerRepository {
 public:
  util::Result<std::vector<domain::McpServer>> List() override { return servers; }
  util::Result<domain::McpServer> FindByName(const std::string&) override {
    return util::Fail(ErrorCode::kNotFound, "unused");
  }
  util::Result<void> Insert(const domain::McpServer&) override { return util::Ok(); }
  util::Result<void> Update(const domain::McpServer&) override { return util::Ok(); }
  util::Result<void> Delete(const std::string&) override { return util::Ok(); }
  std::vector<domain::McpServer> servers;
};

class McpSessionManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    manager_.reset();
    work_.reset();
    io_.stop();
    thread_.join();
  }

  std::shared_ptr<Script> AddServer(const std::string& name, std::vector<std::string> tools) {
    auto script = std::make_shared<Script>();
    script->tools = std::move(tools);
    scripts_[name] = script;
    domain::McpServer s;
    s.uuid = "uuid-" + name;
    s.name = name;
    s.enable = true;
    s.mode = "http";
    repo_.servers.push_back(s);
    return script;
  }

  void StartManager() {
    SessionManagerOptions options;
    options.first_backoff = std::chrono::milliseconds(10);
    options.max_backoff = std::chrono::milliseconds(40);
    options.ping_interval = std::chrono::milliseconds(20);
    manager_ = std::make_unique<McpSessionManager>(
        repo_,
        [this](const domain::McpServer& server,
               boost::asio::any_io_executor) -> util::Result<std::unique_ptr<Session>> {
          auto script = scripts_.at(server.name);
          ++script->made;
          return std::make_unique<ScriptedSession>(server.name, script);
        },
        io_.get_executor(), options);
    manager_->Start();
  }

  bool WaitFor(const std::function<bool()>& condition) {
    for (int i = 0; i < 500; ++i) {
      if (condition()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return condition();
  }

  bool Connected(const std::string& name) {
    auto info = manager_->Info(name);
    return info && info->status == "connected";
  }

  util::Result<std::string> Call(const domain::McpBinding& binding, const std::string& name,
                                 const std::string& arguments = "{}") {
    std::promise<util::Result<std::string>> result;
    manager_->CallTool(binding, name, arguments,
                       [&result](util::Result<std::string> r) { result.set_value(std::move(r)); });
    auto future = result.get_future();
    if (future.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      return util::Fail(ErrorCode::kInternal, "no answer");
    }
    return future.get();
  }

  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
      io_.get_executor()};
  std::thread thread_;
  MemoryRepo repo_;
  std::map<std::string, std::shared_ptr<Script>> scripts_;
  std::unique_ptr<McpSessionManager> manager_;
};

TEST(OfferedToolName, KeepsWhatModelsAcceptAndReplacesTheRest) {
  EXPECT_EQ(OfferedToolName("get_weather-2"), "get_weather-2");
  EXPECT_EQ(OfferedToolName("files.read"), "files_read");
  EXPECT_EQ(OfferedToolName("天气"), "______");  // each UTF-8 byte
  EXPECT_EQ(OfferedToolName(std::string(100, 'a')).size(), 64u);
}

TEST_F(McpSessionManagerTest, NamesGoToTheFirstBoundServerInNameOrder) {
  auto b = AddServer("b-server", {"echo", "only_b"});
  auto a = AddServer("a-server", {"echo", "files.read"});
  StartManager();
  ASSERT_TRUE(WaitFor([&] { return Connected("a-server") && Connected("b-server"); }));

  domain::McpBinding all;
  std::vector<std::string> names;
  for (const auto& t : manager_->Tools(all)) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"echo", "files_read", "only_b"}));
  EXPECT_EQ(*Call(all, "echo"), "a-server:echo");
  EXPECT_EQ(*Call(all, "only_b"), "b-server:only_b");
  // The server is called by its own name for the tool, with the model's arguments.
  EXPECT_EQ(*Call(all, "files_read", R"({"path":"/x"})"), "a-server:files.read");
  EXPECT_EQ(a->calls.back(), R"(files.read {"path":"/x"})");

  domain::McpBinding only_b{false, {"b-server"}};
  EXPECT_EQ(*Call(only_b, "echo"), "b-server:echo");
  auto unbound = Call(only_b, "files_read");
  ASSERT_FALSE(unbound);
  EXPECT_EQ(unbound.error().code, ErrorCode::kNotFound);
  domain::McpBinding none{false, {}};
  EXPECT_TRUE(manager_->Tools(none).empty());

  auto bad = Call(all, "echo", "[1,2]");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Call(all, "echo", "")) << "no arguments at all is an empty object";
}

TEST_F(McpSessionManagerTest, AToolsErrorResultReachesTheModelMarked) {
  AddServer("s", {"broken"});
  StartManager();
  ASSERT_TRUE(WaitFor([&] { return Connected("s"); }));
  EXPECT_EQ(*Call({}, "broken"), "the tool reported an error: s:broken");
}

TEST_F(McpSessionManagerTest, FailedStartsAreRetriedWithBackoffAndCounted) {
  auto s = AddServer("flaky", {"echo"});
  s->failing_starts = 3;
  StartManager();
  ASSERT_TRUE(WaitFor([&] { return Connected("flaky"); }));
  auto info = manager_->Info("flaky");
  EXPECT_EQ(info->restarts, 3);
  EXPECT_EQ(s->made.load(), 4);
  EXPECT_TRUE(info->error_message.empty());
  ASSERT_EQ(info->tools.size(), 1u);
  EXPECT_EQ(manager_->Stats().front().restarts, 3);
}

TEST_F(McpSessionManagerTest, AServerThatWentAwayIsStartedAgain) {
  auto s = AddServer("mortal", {"echo"});
  StartManager();
  ASSERT_TRUE(WaitFor([&] { return Connected("mortal"); }));
  s->failing_starts = 2;
  s->alive = false;  // seen at the next ping
  ASSERT_TRUE(WaitFor([&] { return manager_->Info("mortal")->restarts >= 1; }));
  s->alive = true;
  ASSERT_TRUE(WaitFor([&] { return Connected("mortal"); }));
  EXPECT_GE(manager_->Info("mortal")->restarts, 3);
  EXPECT_EQ(*Call({}, "echo"), "mortal:echo");
}

TEST_F(McpSessionManagerTest, ReloadFollowsTheStoredServers) {
  AddServer("one", {"echo"});
  StartManager();
  ASSERT_TRUE(WaitFor([&] { return Connected("one"); }));
  repo_.servers[0].enable = false;
  manager_->Reload();
  EXPECT_FALSE(manager_->Info("one"));
  EXPECT_TRUE(manager_->Tools({}).empty());
  repo_.servers[0].enable = true;
  repo_.servers[0].extra_args["url"] = "http://changed";
  manager_->Reload();
  ASSERT_TRUE(WaitFor([&] { return Connected("one"); }));
  EXPECT_EQ(scripts_["one"]->made.load(), 2);
  manager_->Stop(std::chrono::seconds(2));
  EXPECT_FALSE(manager_->Info("one"));
  auto after = Call({}, "echo");
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace sb::mcp
