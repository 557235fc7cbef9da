// Plugin processes for real: the example plugin (examples/plugins/greeter) and a misbehaving
// probe (tests/plugins/probe.py) run as children over pipes: handshake, commands, events and
// tools; calls back into the core; deadlines, crashes, garbage, oversized lines, stderr; the
// scrubbed environment, limits and closed descriptors; stopping one that will not stop.
#include "plugins/plugin_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "plugins/manifest.hpp"
#include "support/eventually.hpp"

namespace sb::plugins {
namespace {

using namespace std::chrono_literals;
using util::ErrorCode;

class RecordingHost final : public PluginHost {
 public:
  void HandlePluginCall(const std::string& action, const util::JsonObject& data,
                        std::function<void(util::Result<util::Json>)> answer) override {
    std::lock_guard lock(mu);
    calls.push_back(action);
    if (action == "storage_get") {
      util::JsonObject out;
      auto key = std::string(data.at("key").as_string());
      out["value"] = storage.count(key) ? util::Json(storage[key]) : util::Json(nullptr);
      return answer(util::Json(out));
    }
    if (action == "storage_set") {
      storage[std::string(data.at("key").as_string())] = std::string(data.at("value").as_string());
      return answer(util::Json(util::JsonObject()));
    }
    if (action == "log") {
      logs.push_back(std::string(data.at("text").as_string()));
      return answer(util::Json(util::JsonObject()));
    }
    answer(util::Fail(ErrorCode::kInvalidArgument, "unknown action " + action));
  }
  void OnPluginLog(const std::string& line) override {
    std::lock_guard lock(mu);
    logs.push_back(line);
  }
  bool Logged(std::string_view text) {
    std::lock_guard lock(mu);
    for (const auto& l : logs) {
      if (l.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::mutex mu;
  std::vector<std::string> calls;
  std::vector<std::string> logs;
  std::map<std::string, std::string> storage;
};

using test::Eventually;

class PluginProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    if (process_) Stop(process_);
    work_.reset();
    io_.stop();
    thread_.join();
  }

  std::shared_ptr<PluginProcess> Start(const std::filesystem::path& dir,
                                       std::vector<std::string> argv, ProcessLimits limits = {}) {
    PluginLaunch launch;
    launch.dir = dir;
    launch.argv = std::move(argv);
    launch.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "SB_PLUGIN_ID=test/probe"};
    launch.limits = limits;
    auto p = PluginProcess::Spawn(io_.get_executor(), launch, host_, [this](int status) {
      exit_status_ = status;
      exited_ = true;
    });
    EXPECT_TRUE(p) << p.error().message;
    process_ = p ? *p : nullptr;
    return process_;
  }
  std::shared_ptr<PluginProcess> StartProbe(ProcessLimits limits = {}) {
    return Start(SB_TEST_PLUGINS, {"python3", "probe.py"}, limits);
  }

  util::Result<util::Json> Call(const std::shared_ptr<PluginProcess>& p, std::string action,
                                util::JsonObject data = {}, std::chrono::milliseconds d = 5s) {
    std::promise<util::Result<util::Json>> done;
    auto f = done.get_future();
    std::atomic<int> calls{0};
    p->Call(action, std::move(data), d, [&](util::Result<util::Json> r) {
      if (++calls == 1) done.set_value(std::move(r));
    });
    if (f.wait_for(10s) != std::future_status::ready) {
      return util::Fail(ErrorCode::kInternal, "test: no answer at all");
    }
    return f.get();
  }

  void Stop(const std::shared_ptr<PluginProcess>& p, std::chrono::milliseconds grace = 1s) {
    std::promise<void> stopped;
    auto f = stopped.get_future();
    p->Stop(grace, [&] { stopped.set_value(); });
    ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  std::thread thread_;
  std::shared_ptr<RecordingHost> host_ = std::make_shared<RecordingHost>();
  std::shared_ptr<PluginProcess> process_;
  std::atomic<bool> exited_{false};
  std::atomic<int> exit_status_{-1};
};

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(PluginProcessTest, TheExamplePluginAnswersCommandsEventsAndTools) {
  const std::filesystem::path dir = SB_EXAMPLE_PLUGIN;
  auto manifest = ParseManifest(ReadFile(dir / "manifest.yaml"));
  ASSERT_TRUE(manifest) << manifest.error().message;
  auto p = Start(dir, manifest->command);
  ASSERT_TRUE(p);

  util::JsonObject hello;
  hello["protocol_versions"] = util::JsonArray{1};
  hello["config"] = util::JsonObject{{"greeting", "Howdy"}, {"trigger", "hey"}};
  auto shake = Call(p, "handshake", hello);
  ASSERT_TRUE(shake) << shake.error().message;
  EXPECT_EQ(shake->at("protocol_version").as_int64(), 1);
  EXPECT_EQ(shake->at("commands").at(0).at("name").as_string(), "greet");
  EXPECT_EQ(shake->at("tools").at(0).at("name").as_string(), "word_count");
  EXPECT_TRUE(Eventually([&] { return host_->Logged("greeter ready"); }));

  auto greet = Call(p, "command", {{"command", "greet"}, {"args", util::JsonArray{"Ann"}}});
  ASSERT_TRUE(greet) << greet.error().message;
  EXPECT_EQ(greet->at("reply").as_string(), "Howdy, Ann!");
  EXPECT_EQ(host_->storage["greetings"], "1");  // it called back into the core

  auto triggered =
      Call(p, "event", {{"event", "message_received"}, {"text", " Hey "}, {"sender_id", "u1"}});
  ASSERT_TRUE(triggered);
  EXPECT_EQ(triggered->at("reply").as_string(), "Howdy, u1!");
  EXPECT_TRUE(triggered->at("prevent_default").as_bool());
  EXPECT_EQ(host_->storage["greetings"], "2");
  auto ignored = Call(p, "event", {{"event", "message_received"}, {"text", "what's up"}});
  ASSERT_TRUE(ignored);
  EXPECT_TRUE(ignored->as_object().empty());

  auto tool =
      Call(p, "tool_call",
           {{"tool", "word_count"}, {"arguments", util::JsonObject{{"text", "one two three"}}}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(tool->at("result").at("words").as_int64(), 3);
  auto unknown = Call(p, "command", {{"command", "nope"}});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(unknown.error().message.find("unknown command nope"), std::string::npos);

  Stop(p);
  EXPECT_TRUE(exited_);
  EXPECT_TRUE(WIFEXITED(exit_status_.load()) && WEXITSTATUS(exit_status_.load()) == 0);
  auto after = Call(p, "command", {{"command", "greet"}});
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code, ErrorCode::kUnavailable);
}

TEST_F(PluginProcessTest, TheChildGetsOnlyItsEnvironmentLimitsAndFolder) {
  ::setenv("API__JWT_SECRET", "server-secret", 1);
  ProcessLimits limits;
  limits.open_files = 77;
  limits.memory_bytes = 1ull << 30;
  auto p = StartProbe(limits);
  ASSERT_TRUE(p);
  auto env = Call(p, "env");
  ASSERT_TRUE(env) << env.error().message;
  const auto& vars = env->at("env").as_object();
  EXPECT_FALSE(vars.contains("API__JWT_SECRET"));
  EXPECT_FALSE(vars.contains("HOME"));
  EXPECT_EQ(vars.at("SB_PLUGIN_ID").as_string(), "test/probe");
  EXPECT_EQ(std::filesystem::path(std::string(env->at("cwd").as_string())),
            std::filesystem::canonical(SB_TEST_PLUGINS));
  EXPECT_EQ(env->at("nofile").as_int64(), 77);
  EXPECT_EQ(env->at("as").as_int64(), 1ll << 30);
  // stdin, stdout, stderr and the one listdir opened: none of the server's descriptors.
  EXPECT_LE(env->at("fds").as_array().size(), 4u) << util::SerializeJson(env->at("fds"));
}

// The server ignores SIGPIPE; a plugin must start with the usual signal dispositions and no
// blocked signals, as ignored signals would otherwise stay ignored across exec.
TEST_F(PluginProcessTest, TheChildStartsWithDefaultSignals) {
  auto p = Start(SB_TEST_PLUGINS,
                 {"sh", "-c", "grep -E '^Sig(Ign|Blk)' /proc/self/status >&2; exec sleep 10"});
  ASSERT_TRUE(p);
  ASSERT_TRUE(Eventually([&] { return host_->Logged("SigIgn") && host_->Logged("SigBlk"); }));
  auto mask = [&](const std::string& name) {
    std::lock_guard lock(host_->mu);
    for (const auto& line : host_->logs) {
      auto at = line.find(name + ":");
      if (at != std::string::npos)
        return std::stoull(line.substr(at + name.size() + 1), nullptr, 16);
    }
    return ~0ull;
  };
  EXPECT_EQ(mask("SigIgn") & (1ull << (SIGPIPE - 1)), 0u) << "SIGPIPE still ignored";
  EXPECT_EQ(mask("SigBlk"), 0u);
}

TEST_F(PluginProcessTest, AHangingCallTimesOutAndThePluginStaysUsable) {
  auto p = StartProbe();
  ASSERT_TRUE(p);
  const auto t0 = std::chrono::steady_clock::now();
  auto hang = Call(p, "hang", {}, 200ms);
  ASSERT_FALSE(hang);
  EXPECT_EQ(hang.error().code, ErrorCode::kUpstreamTimeout);
  EXPECT_NE(hang.error().message.find("did not answer hang within 200 ms"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(p->Pending(), 0u);
  auto echo = Call(p, "echo", {{"x", 1}});
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->at("x").as_int64(), 1);
}

TEST_F(PluginProcessTest, ACrashEndsItsCallsAndIsReported) {
  auto p = StartProbe();
  ASSERT_TRUE(p);
  std::promise<util::Result<util::Json>> slow;
  p->Call("hang", {}, 10s, [&](util::Result<util::Json> r) { slow.set_value(std::move(r)); });
  auto crash = Call(p, "crash");
  ASSERT_FALSE(crash);
  EXPECT_EQ(crash.error().code, ErrorCode::kUnavailable);
  auto f = slow.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);  // not left waiting for 10 s
  EXPECT_EQ(f.get().error().code, ErrorCode::kUnavailable);
  ASSERT_TRUE(Eventually([&] { return exited_.load(); }));
  EXPECT_TRUE(WIFEXITED(exit_status_.load()));
  EXPECT_EQ(WEXITSTATUS(exit_status_.load()), 3);
  EXPECT_EQ(Call(p, "echo").error().code, ErrorCode::kUnavailable);
}

TEST_F(PluginProcessTest, ErrorsStderrGarbageAndCallsIntoTheCore) {
  auto p = StartProbe();
  ASSERT_TRUE(p);
  auto fail = Call(p, "fail");
  ASSERT_FALSE(fail);
  EXPECT_EQ(fail.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ(fail.error().message, "the plugin answered: no such thing");
  ASSERT_TRUE(Call(p, "stderr"));
  EXPECT_TRUE(Eventually([&] { return host_->Logged("something went wrong"); }));
  auto garbage = Call(p, "garbage");
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->at("after").as_string(), "garbage");
  EXPECT_TRUE(host_->Logged("protocol: ignored a line"));
  host_->storage["color"] = "green";
  auto ask = Call(p, "ask", {{"key", "color"}});
  ASSERT_TRUE(ask) << ask.error().message;
  const auto& said = ask->at("core_said").as_object();
  EXPECT_EQ(said.at("code").as_int64(), 0);
  EXPECT_EQ(said.at("seq_id").as_int64(), 101);
  EXPECT_EQ(said.at("data").at("value").as_string(), "green");
}

TEST_F(PluginProcessTest, AnOversizedLineEndsThePlugin) {
  ProcessLimits limits;
  limits.max_line_bytes = 1 << 20;
  auto p = StartProbe(limits);
  ASSERT_TRUE(p);
  auto huge = Call(p, "huge");
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(host_->Logged("longer than 1048576 bytes"));
  EXPECT_TRUE(Eventually([&] { return exited_.load(); }));
}

TEST_F(PluginProcessTest, APluginThatWillNotStopIsKilled) {
  auto p = StartProbe();
  ASSERT_TRUE(p);
  ASSERT_TRUE(Call(p, "stubborn"));  // ignores shutdown, its stdin's end and SIGTERM
  const auto t0 = std::chrono::steady_clock::now();
  Stop(p, 200ms);  // shutdown, 200 ms, SIGTERM, 200 ms, SIGKILL
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 400ms);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  ASSERT_TRUE(exited_);
  EXPECT_TRUE(WIFSIGNALED(exit_status_.load()));
  EXPECT_EQ(WTERMSIG(exit_status_.load()), SIGKILL);
  Stop(p);  // idempotent: at once, the process is gone
}

// A grandchild in its own session escapes the group's signals and keeps the plugin's stdout and
// stderr open, so their end never comes: Stop must still reap the plugin, report its exit, and
// free the process object, which the pending reads kept alive (a leak LeakSanitizer saw).
TEST_F(PluginProcessTest, ADescendantHoldingStdoutNeitherBlocksStopNorKeepsTheProcessAlive) {
  auto p = Start(SB_TEST_PLUGINS,
                 {"sh", "-c", "setsid sleep 30 & echo grandchild=$! >&2; exec sleep 30"});
  ASSERT_TRUE(p);
  ASSERT_TRUE(Eventually([&] { return host_->Logged("grandchild="); }));
  pid_t grandchild = 0;
  {
    std::lock_guard lock(host_->mu);
    for (const auto& line : host_->logs) {
      if (line.rfind("grandchild=", 0) == 0) grandchild = std::stoi(line.substr(11));
    }
  }
  ASSERT_GT(grandchild, 0);
  struct KillOnExit {
    pid_t pid;
    ~KillOnExit() { ::kill(pid, SIGKILL); }
  } cleanup{grandchild};
  ASSERT_EQ(::kill(grandchild, 0), 0) << "the grandchild should be running";

  std::weak_ptr<PluginProcess> weak = p;
  const auto t0 = std::chrono::steady_clock::now();
  Stop(p, 100ms);  // the shutdown request and stdin's end are ignored; SIGTERM after 100 ms
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  ASSERT_TRUE(exited_);
  EXPECT_TRUE(WIFSIGNALED(exit_status_.load()));
  EXPECT_EQ(WTERMSIG(exit_status_.load()), SIGTERM);
  EXPECT_EQ(::kill(grandchild, 0), 0) << "the test needs the grandchild to outlive the plugin";
  EXPECT_EQ(Call(p, "echo").error().code, ErrorCode::kUnavailable);
  p.reset();
  process_.reset();
  EXPECT_TRUE(Eventually([&] { return weak.expired(); }))
      << "the process object outlived its process: " << weak.use_count() << " references left";
}

TEST_F(PluginProcessTest, AMissingProgramIsAClearError) {
  PluginLaunch launch;
  launch.dir = SB_TEST_PLUGINS;
  launch.argv = {"./no-such-program"};
  auto p = PluginProcess::Spawn(io_.get_executor(), launch, host_, nullptr);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(p.error().message.find("no-such-program is missing"), std::string::npos);
  launch.argv = {"no-such-interpreter-xyz"};
  p = PluginProcess::Spawn(io_.get_executor(), launch, host_, nullptr);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("not installed on this server"), std::string::npos);
}

}  // namespace
}  // namespace sb::plugins
