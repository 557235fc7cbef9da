// The plugin supervisor over real processes (the example greeter and the probe): start with a
// handshake and capabilities, restart after a crash with backoff, the circuit breaker, an upgrade
// that fails leaving the old version running, a handshake that never comes, stop.
#include "plugins/plugin_supervisor.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <future>
#include <mutex>
#include <thread>

#include "support/eventually.hpp"
#include "util/simulated_clock.hpp"

namespace sb::plugins {
namespace {

using namespace std::chrono_literals;
using util::ErrorCode;

class RecordingCore final : public PluginCore {
 public:
  void HandlePluginCall(const domain::PluginKey&, const std::string& action,
                        const util::JsonObject&,
                        std::function<void(util::Result<util::Json>)> answer) override {
    if (action == "storage_get") return answer(util::Json(util::JsonObject{{"value", nullptr}}));
    answer(util::Json(util::JsonObject()));
  }
  void PluginLog(const domain::PluginKey& plugin, const std::string& line) override {
    std::lock_guard lock(mu);
    logs.push_back(plugin.id() + ": " + line);
  }
  bool Logged(std::string_view text) {
    std::lock_guard lock(mu);
    for (const auto& l : logs) {
      if (l.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::mutex mu;
  std::vector<std::string> logs;
};

template <typename Pred>
bool Eventually(Pred pred) {
  return test::Eventually(pred, 10s);
}

domain::InstalledPlugin Record(std::string name, std::vector<std::string> command,
                               std::string version = "1.0.0") {
  domain::InstalledPlugin p;
  p.author = "test";
  p.name = std::move(name);
  p.version = std::move(version);
  util::JsonArray argv;
  for (auto& a : command) argv.emplace_back(a);
  p.manifest["command"] = std::move(argv);
  p.config = {{"greeting", "Hey"}};
  return p;
}

class SupervisorTest : public ::testing::Test {
 protected:
  SupervisorTest() {
    options_.clock = &clock_;  // restart pauses pass when the test advances it
    options_.first_backoff = 50ms;
    options_.max_backoff = 200ms;
    options_.max_crashes = 3;
    options_.handshake_timeout = 2s;
    options_.stop_grace = 500ms;
    supervisor_ = std::make_unique<PluginSupervisor>(io_.get_executor(), core_, options_);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~SupervisorTest() override {
    supervisor_->StopAll();
    supervisor_.reset();
    work_.reset();
    io_.stop();
    thread_.join();
  }

  util::Result<void> Launch(const domain::InstalledPlugin& p, const std::filesystem::path& dir) {
    std::promise<util::Result<void>> done;
    supervisor_->Launch(p, dir, [&](util::Result<void> r) { done.set_value(std::move(r)); });
    auto f = done.get_future();
    if (f.wait_for(15s) != std::future_status::ready) {
      return util::Fail(ErrorCode::kInternal, "test: Launch never ended");
    }
    return f.get();
  }
  util::Result<util::Json> Call(const domain::PluginKey& key, std::string action,
                                util::JsonObject data = {}) {
    std::promise<util::Result<util::Json>> done;
    supervisor_->Call(key, std::move(action), std::move(data), 3s,
                      [&](util::Result<util::Json> r) { done.set_value(std::move(r)); });
    return done.get_future().get();
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  RecordingCore core_;
  util::SimulatedClock clock_;
  SupervisorOptions options_;
  std::unique_ptr<PluginSupervisor> supervisor_;
  std::thread thread_;
};

// Shutdown while a plugin is still in its first start: the start is called off, nothing runs.
TEST_F(SupervisorTest, StopAllCallsOffAPluginStillStarting) {
  auto slow = Record("slow", {"sh", "-c", "sleep 1; exec python3 probe.py"});
  std::promise<util::Result<void>> done;
  supervisor_->Launch(slow, SB_TEST_PLUGINS,
                      [&](util::Result<void> r) { done.set_value(std::move(r)); });
  supervisor_->StopAll();
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  auto started = f.get();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().code, ErrorCode::kCancelled);
  EXPECT_NE(supervisor_->Status(slow.key()).state, PluginState::kRunning);
  EXPECT_EQ(Call(slow.key(), "echo").error().code, ErrorCode::kUnavailable);
}

TEST_F(SupervisorTest, StartsWithAHandshakeAndKnowsWhatThePluginOffers) {
  auto greeter = Record("greeter", {"python3", "main.py"});
  ASSERT_TRUE(Launch(greeter, SB_EXAMPLE_PLUGIN));
  EXPECT_EQ(supervisor_->Status(greeter.key()).state, PluginState::kRunning);
  auto caps = supervisor_->Capabilities(greeter.key());
  ASSERT_TRUE(caps);
  ASSERT_EQ(caps->commands.size(), 1u);
  EXPECT_EQ(caps->commands[0].name, "greet");
  ASSERT_EQ(caps->tools.size(), 1u);
  EXPECT_EQ(caps->tools[0].parameters.at("required").at(0).as_string(), "text");
  EXPECT_EQ(caps->events, std::vector<std::string>{"message_received"});
  auto reply = Call(greeter.key(), "command", {{"command", "greet"}, {"args", {"Bo"}}});
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ(reply->at("reply").as_string(), "Hey, Bo!");  // the config reached it

  std::promise<void> stopped;
  supervisor_->Stop(greeter.key(), [&] { stopped.set_value(); });
  ASSERT_EQ(stopped.get_future().wait_for(5s), std::future_status::ready);
  EXPECT_EQ(supervisor_->Status(greeter.key()).state, PluginState::kStopped);
  EXPECT_EQ(Call(greeter.key(), "command").error().code, ErrorCode::kUnavailable);
}

TEST_F(SupervisorTest, ACrashedPluginRestartsUntilTheCircuitOpens) {
  auto probe = Record("probe", {"python3", "probe.py"});
  ASSERT_TRUE(Launch(probe, SB_TEST_PLUGINS));
  for (int crash = 1; crash <= 2; ++crash) {
    EXPECT_FALSE(Call(probe.key(), "crash"));
    ASSERT_TRUE(Eventually(
        [&] { return supervisor_->Status(probe.key()).state == PluginState::kRestarting; }));
    // The pause is on the clock: without time passing, nothing restarts.
    clock_.Advance(49ms);
    EXPECT_EQ(supervisor_->Status(probe.key()).state, PluginState::kRestarting);
    clock_.Advance(std::chrono::milliseconds(50 * (1 << (crash - 1))));  // the doubled pause
    // Running again means a new process answers.
    ASSERT_TRUE(Eventually([&] { return Call(probe.key(), "echo").has_value(); }))
        << "no restart after crash " << crash;
    EXPECT_EQ(supervisor_->Status(probe.key()).state, PluginState::kRunning);
    EXPECT_EQ(supervisor_->Status(probe.key()).restarts, crash);
  }
  EXPECT_TRUE(core_.Logged("test/probe: the plugin exited with status 3; restarting in"));
  EXPECT_FALSE(Call(probe.key(), "crash"));
  ASSERT_TRUE(
      Eventually([&] { return supervisor_->Status(probe.key()).state == PluginState::kFailed; }));
  EXPECT_NE(supervisor_->Status(probe.key()).error.find("failed 3 times"), std::string::npos);
  clock_.Advance(1s);  // longer than any backoff: it stays down
  EXPECT_EQ(supervisor_->Status(probe.key()).state, PluginState::kFailed);
  EXPECT_EQ(Call(probe.key(), "echo").error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(supervisor_->Status(probe.key()).restarts, 3);
  ASSERT_TRUE(Launch(probe, SB_TEST_PLUGINS));  // launched again by hand: the circuit closes
  EXPECT_TRUE(Call(probe.key(), "echo"));
  EXPECT_EQ(supervisor_->Status(probe.key()).restarts, 0);
}

TEST_F(SupervisorTest, AFailedUpgradeLeavesTheRunningVersion) {
  auto v1 = Record("probe", {"python3", "probe.py"}, "1.0.0");
  ASSERT_TRUE(Launch(v1, SB_TEST_PLUGINS));
  auto broken = Record("probe", {"python3", "-c", "import sys; sys.exit(2)"}, "2.0.0");
  auto r = Launch(broken, SB_TEST_PLUGINS);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("launch failed"), std::string::npos) << r.error().message;
  EXPECT_EQ(supervisor_->Status(v1.key()).state, PluginState::kRunning);
  EXPECT_TRUE(Call(v1.key(), "echo"));  // still the old process
  auto missing = Record("probe", {"./missing.sh"}, "3.0.0");
  r = Launch(missing, SB_TEST_PLUGINS);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("missing.sh is missing"), std::string::npos);
  EXPECT_TRUE(Call(v1.key(), "echo"));
}

// The plugin ends on the shutdown request, but a grandchild in its own session keeps its stdout
// open: StopAll still sees it end after the grace's SIGTERM instead of waiting out its own limit,
// and the process, which the supervisor's exit callback and the pending reads held in a cycle, is
// freed (LeakSanitizer fails `make test-sanitize` otherwise).
TEST_F(SupervisorTest, StopAllIsNotHeldUpByADescendantHoldingThePluginsStdout) {
  auto leaky = Record(
      "leaky", {"sh", "-c", "setsid sleep 30 & echo grandchild=$! >&2; exec python3 probe.py"});
  ASSERT_TRUE(Launch(leaky, SB_TEST_PLUGINS));
  ASSERT_TRUE(Eventually([&] { return core_.Logged("grandchild="); }));
  pid_t grandchild = 0;
  {
    std::lock_guard lock(core_.mu);
    for (const auto& line : core_.logs) {
      if (auto at = line.find("grandchild="); at != std::string::npos) {
        grandchild = std::stoi(line.substr(at + 11));
      }
    }
  }
  ASSERT_GT(grandchild, 0);
  struct KillOnExit {
    pid_t pid;
    ~KillOnExit() { ::kill(pid, SIGKILL); }
  } cleanup{grandchild};

  const auto t0 = std::chrono::steady_clock::now();
  supervisor_->StopAll();  // StopAll gives up after 2 x 500 ms + 1 s
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms);
  EXPECT_EQ(::kill(grandchild, 0), 0) << "the test needs the grandchild to outlive the plugin";
  EXPECT_NE(supervisor_->Status(leaky.key()).state, PluginState::kRunning);
}

TEST_F(SupervisorTest, AHandshakeThatNeverComesFailsTheLaunch) {
  options_.handshake_timeout = 300ms;
  supervisor_ = std::make_unique<PluginSupervisor>(io_.get_executor(), core_, options_);
  auto silent = Record("silent", {"python3", "-c", "import time; time.sleep(30)"});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = Launch(silent, SB_TEST_PLUGINS);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("did not answer handshake within 300 ms"), std::string::npos)
      << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_EQ(supervisor_->Status(silent.key()).state, PluginState::kFailed);
  auto bad_version = Record("old", {"python3", "-c",
                                    "import sys, json; l = sys.stdin.readline(); "
                                    "print(json.dumps({'seq_id': json.loads(l)['seq_id'], "
                                    "'code': 0, 'data': {'protocol_version': 9}}), flush=True); "
                                    "sys.stdin.readline()"});
  r = Launch(bad_version, SB_TEST_PLUGINS);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("protocol version 9 is not supported"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace sb::plugins

namespace sb::plugins {
namespace {

// With the sandbox on, a plugin runs inside it, and its status says what confines it; where the
// machine cannot give a sandbox, the plugin does not start and its status says why.
TEST(SandboxedSupervisor, RunsThePluginInItsSandboxOrNotAtAll) {
  const auto root = std::filesystem::temp_directory_path() /
                    ("sb-supervisor-sandbox-" + std::to_string(::getpid()));
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread thread([&] { io.run(); });
  RecordingCore core;
  auto launch = [&](PluginSupervisor& supervisor, const domain::InstalledPlugin& p) {
    std::promise<util::Result<void>> done;
    supervisor.Launch(p, SB_EXAMPLE_PLUGIN,
                      [&](util::Result<void> r) { done.set_value(std::move(r)); });
    return done.get_future().get();
  };
  auto greeter = Record("greeter", {"python3", "main.py"});
  {
    SupervisorOptions options;
    options.sandbox.enabled = true;
    options.data_root = root;
    PluginSupervisor supervisor(io.get_executor(), core, options);
    auto started = launch(supervisor, greeter);
    ASSERT_TRUE(started) << started.error().message;
    const PluginStatus status = supervisor.Status(greeter.key());
    EXPECT_EQ(status.state, PluginState::kRunning);
    EXPECT_EQ(status.sandbox.rfind("bubblewrap; network off; ", 0), 0u) << status.sandbox;
    EXPECT_TRUE(std::filesystem::is_directory(root / "test" / "greeter" / ".data"));
    supervisor.StopAll();
  }
  {
    SupervisorOptions options;
    options.sandbox.enabled = true;
    options.sandbox.bwrap = "/nonexistent/bwrap";
    options.data_root = root;
    PluginSupervisor supervisor(io.get_executor(), core, options);
    auto started = launch(supervisor, greeter);
    ASSERT_FALSE(started);
    EXPECT_EQ(started.error().code, ErrorCode::kUnavailable);
    const PluginStatus status = supervisor.Status(greeter.key());
    EXPECT_EQ(status.state, PluginState::kFailed);
    EXPECT_NE(status.error.find("no sandbox on this machine: bubblewrap"), std::string::npos)
        << status.error;
    EXPECT_NE(status.error.find("plugins.sandbox: off"), std::string::npos) << status.error;
  }
  work.reset();
  io.stop();
  thread.join();
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace sb::plugins
