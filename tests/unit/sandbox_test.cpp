// The plugin sandbox for real: bubblewrap, the seccomp program and the cgroup on this machine.
// A hostile plugin (tests/plugins/hostile) tries every escape docs/security.md lists — the
// server's secrets and database, its memory, other processes, loopback services, privileged
// system calls, its own package, a fork bomb, more memory than allowed, and a setsid grandchild
// meant to outlive it — and the test fails if any of them is reached.
#include "sandbox/sandbox.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <thread>

#include "plugins/plugin_process.hpp"
#include "sandbox/seccomp_filter.hpp"
#include "support/eventually.hpp"

namespace sb::plugins {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using util::ErrorCode;
using namespace sb::sandbox;

class QuietHost final : public PluginHost {
 public:
  void HandlePluginCall(const std::string& action, const util::JsonObject&,
                        std::function<void(util::Result<util::Json>)> answer) override {
    answer(util::Fail(ErrorCode::kInvalidArgument, "unknown action " + action));
  }
  void OnPluginLog(const std::string&) override {}
};

// Processes on the host whose command line holds `marker`.
int CountProcessesWith(const std::string& marker) {
  int found = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    if (s.str().find(marker) != std::string::npos) ++found;
  }
  return found;
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("sb-sandbox-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "data" / "plugins" / "tests" / "hostile");
    for (const char* secret : {"jwt_secret", "recovery_key", "config.yaml", "switchboard.db"}) {
      std::ofstream(root_ / "data" / secret) << "top secret " << secret << "\n";
    }
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    io_.stop();
    thread_.join();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  util::Result<std::shared_ptr<PluginProcess>> Spawn(const SandboxOptions& options,
                                                     std::string* note) {
    PluginLaunch launch;
    launch.dir = SB_TEST_PLUGINS "/hostile";
    launch.argv = {"python3", "main.py"};
    launch.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nowhere", "PYTHONUNBUFFERED=1"};
    launch.limits.memory_bytes = 4ull << 30;  // the cgroup's limit is the one under test
    SandboxSpec spec;
    spec.package_dir = launch.dir;
    spec.data_dir = root_ / "data" / "plugins" / "tests" / "hostile" / ".data";
    spec.cgroup_name = "sb-test-hostile-" + std::to_string(::getpid());
    if (auto ok = EnterSandbox(options, spec, launch, note); !ok) return tl::unexpected(ok.error());
    return PluginProcess::Spawn(io_.get_executor(), std::move(launch),
                                std::make_shared<QuietHost>(), [](int) {});
  }

  util::Result<util::Json> Call(const std::shared_ptr<PluginProcess>& p, const std::string& action,
                                util::JsonObject data, std::chrono::milliseconds deadline) {
    std::promise<util::Result<util::Json>> done;
    auto f = done.get_future();
    p->Call(action, std::move(data), deadline,
            [&](util::Result<util::Json> r) { done.set_value(std::move(r)); });
    return f.get();  // the call's own deadline ends it
  }

  void Stop(const std::shared_ptr<PluginProcess>& p) {
    std::promise<void> stopped;
    auto f = stopped.get_future();
    p->Stop(500ms, [&] { stopped.set_value(); });
    ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  }

  fs::path root_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  std::thread thread_;
};

TEST(SeccompFilterTest, CompilesAProgramDenyingWhatPluginsNeverNeed) {
  auto fd = WriteSeccompProgram();
  ASSERT_TRUE(fd) << fd.error().message;
  EXPECT_GT(::lseek(*fd, 0, SEEK_END), 0);
  ::close(*fd);
  const auto& denied = DeniedSyscalls();
  for (const char* name : {"ptrace", "mount", "init_module", "keyctl", "bpf", "unshare"}) {
    EXPECT_NE(std::find(denied.begin(), denied.end(), name), denied.end()) << name;
  }
}

TEST(CgroupTest, GroupsOfADeadServerAreRemovedOthersKept) {
  const fs::path parent =
      fs::temp_directory_path() / ("sb-cgroup-stale-" + std::to_string(::getpid()));
  fs::create_directories(parent);
  const std::string alive = "sb-a-b-" + std::to_string(::getpid()) + "-1";
  for (const std::string& name : {std::string("sb-a-b-999999999-3"), alive,
                                  std::string("sb-x-y-999999999-4"), std::string("other-1-2")}) {
    fs::create_directory(parent / name);
  }
  fs::create_directory(parent / "sb-x-y-999999999-4" / "busy");  // not empty: kept
  sandbox::Cgroup::RemoveStale(parent);
  EXPECT_FALSE(fs::exists(parent / "sb-a-b-999999999-3"));
  EXPECT_TRUE(fs::exists(parent / alive));
  EXPECT_TRUE(fs::exists(parent / "sb-x-y-999999999-4"));
  EXPECT_TRUE(fs::exists(parent / "other-1-2"));
  fs::remove_all(parent);
}

TEST(SandboxProbeTest, ThisMachineGivesASandbox) {
  auto ok = ProbeSandbox(SandboxOptions{});
  EXPECT_TRUE(ok) << ok.error().message;
}

TEST(SandboxProbeTest, AMissingBubblewrapIsNamed) {
  SandboxOptions options;
  options.bwrap = "/nonexistent/bwrap";
  auto ok = ProbeSandbox(options);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(ok.error().message.find("bubblewrap"), std::string::npos) << ok.error().message;
}

TEST_F(SandboxTest, TheHostilePluginReachesNothing) {
  // A loopback service of the host, as the server's own port would be.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t length = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);

  SandboxOptions options;
  options.limits.processes = 32;
  options.limits.memory_bytes = 256ull << 20;
  std::string note;
  auto p = Spawn(options, &note);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(note, "") << "this machine offers cgroups: " << sandbox::Cgroup::Describe();

  const std::string marker = "sb-hostile-" + std::to_string(::getpid());
  util::JsonObject config{{"data_dir", (root_ / "data").string()},
                          {"server_pid", std::to_string(::getpid())},
                          {"port", std::to_string(ntohs(address.sin_port))},
                          {"marker", marker},
                          {"processes", "150"},
                          {"memory_mb", "400"}};
  auto shake =
      Call(*p, "handshake", {{"protocol_versions", util::JsonArray{1}}, {"config", config}}, 20s);
  ASSERT_TRUE(shake) << shake.error().message;
  auto answer = Call(*p, "command", {{"command", "escape"}}, 90s);
  ASSERT_TRUE(answer) << answer.error().message;
  auto report = util::ParseJson(std::string(answer->at("reply").as_string()));
  ASSERT_TRUE(report && report->is_object());
  int tried = 0;
  for (const auto& [name, result] : report->as_object()) {
    ++tried;
    std::cout << "  " << std::string(name) << ": " << result.at("detail").as_string() << "\n";
    EXPECT_FALSE(result.at("reached").as_bool())
        << "escape reached: " << std::string(name) << ": " << result.at("detail").as_string();
  }
  EXPECT_GE(tried, 30);
  // The setsid grandchild exists now, inside the sandbox...
  EXPECT_TRUE(test::Eventually([&] { return CountProcessesWith(marker) == 1; }, 5s));
  Stop(*p);
  // ...and not after the plugin stopped.
  EXPECT_TRUE(test::Eventually([&] { return CountProcessesWith(marker) == 0; }, 5s));
  ::close(listener);
  // Its files are the ones it may keep; the server's are untouched.
  std::ifstream secret(root_ / "data" / "jwt_secret");
  std::string line;
  std::getline(secret, line);
  EXPECT_EQ(line, "top secret jwt_secret");
}

// The server's data directory is often relative (make run uses ./data), and bubblewrap runs from
// the package folder.
TEST_F(SandboxTest, RelativeFoldersAreBoundAsTheFoldersMeant) {
  const fs::path cwd = fs::current_path();
  fs::current_path(fs::path(SB_TEST_PLUGINS).parent_path());
  PluginLaunch launch;
  launch.dir = "plugins/hostile";
  launch.argv = {"python3", "main.py"};
  launch.env = {"PATH=/usr/bin:/bin", "HOME=/x"};
  SandboxSpec spec{launch.dir, fs::relative(root_ / "rel-data"),
                   false,      "sb-test-relative-" + std::to_string(::getpid()),
                   {},         "plugin"};
  auto ok = EnterSandbox(SandboxOptions{}, spec, launch, nullptr);
  auto p = ok ? PluginProcess::Spawn(io_.get_executor(), std::move(launch),
                                     std::make_shared<QuietHost>(), [](int) {})
              : tl::unexpected(ok.error());
  fs::current_path(cwd);
  ASSERT_TRUE(p) << p.error().message;
  auto shake = Call(*p, "handshake", {{"protocol_versions", util::JsonArray{1}}}, 20s);
  EXPECT_TRUE(shake) << shake.error().message;
  EXPECT_TRUE(fs::is_directory(root_ / "rel-data"));
  Stop(*p);
}

TEST_F(SandboxTest, AProgramMissingFromThePackageIsNamedBeforeAnythingStarts) {
  PluginLaunch launch;
  launch.dir = SB_TEST_PLUGINS "/hostile";
  launch.argv = {"./not-there.sh"};
  SandboxSpec spec{launch.dir, root_ / "d", false, "sb-test-missing", {}, "plugin"};
  auto ok = EnterSandbox(SandboxOptions{}, spec, launch, nullptr);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace sb::plugins
