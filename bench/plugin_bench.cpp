// Plugin event round trips through the real process and pipes: the example greeter plugin
// (examples/plugins/greeter, Python) answers message_received events, as a plain process and in
// its sandbox (bubblewrap, seccomp, cgroup). Prints a Markdown table for docs/performance.md
// (bench/run.sh writes it there).
//   build/bench/sb_plugin_bench examples/plugins/greeter
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "plugins/plugin_process.hpp"
#include "sandbox/sandbox.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class QuietHost final : public sb::plugins::PluginHost {
 public:
  void HandlePluginCall(const std::string&, const sb::util::JsonObject&,
                        std::function<void(sb::util::Result<sb::util::Json>)> answer) override {
    answer(sb::util::Json(sb::util::JsonObject()));
  }
  void OnPluginLog(const std::string& line) override { fmt::print(stderr, "plugin: {}\n", line); }
};

sb::util::JsonObject Event(int i) {
  return {{"event", "message_received"}, {"bot_uuid", "bench"},
          {"session_id", "person_1"},    {"sender_id", "u1"},
          {"launcher_type", "person"},   {"text", fmt::format("message number {}", i)}};
}

struct Figures {
  double start_ms_p50 = 0;  // spawn to handshake answered
  double p50 = 0, p99 = 0;  // event round trip, µs
  double events_per_second = 0;
  int done = 0, failed = 0;
};

sb::plugins::PluginLaunch LaunchOf(const std::string& dir, bool sandboxed, int run) {
  sb::plugins::PluginLaunch launch;
  launch.dir = dir;
  launch.argv = {"python3", "main.py"};
  launch.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "PYTHONUNBUFFERED=1"};
  if (sandboxed) {
    sb::sandbox::SandboxSpec spec;
    spec.package_dir = dir;
    spec.data_dir = std::filesystem::temp_directory_path() / "sb-plugin-bench-data";
    spec.cgroup_name = fmt::format("sb-bench-greeter-{}-{}", ::getpid(), run);
    if (auto ok = sb::sandbox::EnterSandbox(sb::sandbox::SandboxOptions{}, spec, launch, nullptr);
        !ok) {
      fmt::print(stderr, "no sandbox: {}\n", ok.error().message);
      std::exit(1);
    }
  }
  return launch;
}

using Process = std::shared_ptr<sb::plugins::PluginProcess>;

sb::util::Result<sb::util::Json> Call(const Process& process, const std::string& action,
                                      sb::util::JsonObject data) {
  std::promise<sb::util::Result<sb::util::Json>> p;
  auto f = p.get_future();
  process->Call(action, std::move(data), 10s, [&p](auto r) { p.set_value(std::move(r)); });
  return f.get();
}

Process StartAndShake(boost::asio::io_context& io, const std::string& dir, bool sandboxed,
                      int run) {
  auto process = sb::plugins::PluginProcess::Spawn(io.get_executor(), LaunchOf(dir, sandboxed, run),
                                                   std::make_shared<QuietHost>(), nullptr);
  if (!process) {
    fmt::print(stderr, "cannot start the plugin: {}\n", process.error().message);
    std::exit(1);
  }
  if (auto hello = Call(*process, "handshake",
                        {{"protocol_versions", {1}}, {"config", sb::util::JsonObject{}}});
      !hello) {
    fmt::print(stderr, "handshake failed: {}\n", hello.error().message);
    std::exit(1);
  }
  return *process;
}

void StopProcess(const Process& process) {
  std::promise<void> stopped;
  process->Stop(2s, [&] { stopped.set_value(); });
  stopped.get_future().wait_for(10s);
}

Figures Measure(boost::asio::io_context& io, const std::string& dir, bool sandboxed) {
  Figures figures;
  // 0. Starts: spawn to an answered handshake, the cost a (re)start adds.
  constexpr int kStarts = 20;
  std::vector<double> starts;
  for (int i = 0; i < kStarts; ++i) {
    const auto t0 = Clock::now();
    auto process = StartAndShake(io, dir, sandboxed, i);
    starts.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    StopProcess(process);
  }
  std::sort(starts.begin(), starts.end());
  figures.start_ms_p50 = starts[starts.size() / 2];
  auto process = StartAndShake(io, dir, sandboxed, kStarts);

  // 1. One at a time: the latency a message sees per plugin.
  constexpr int kWarmup = 500, kSequential = 5000;
  std::vector<double> micros;
  for (int i = 0; i < kWarmup + kSequential; ++i) {
    const auto t0 = Clock::now();
    auto r = Call(process, "event", Event(i));
    const auto us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (!r) {
      fmt::print(stderr, "event failed: {}\n", r.error().message);
      std::exit(1);
    }
    if (i >= kWarmup) micros.push_back(us);
  }
  std::sort(micros.begin(), micros.end());
  figures.p50 = micros[micros.size() / 2];
  figures.p99 = micros[micros.size() * 99 / 100];

  // 2. Many in flight: events per second one plugin process sustains.
  constexpr int kConcurrent = 64, kTotal = 50000;
  std::atomic<int> sent{0}, done{0}, failed{0};
  std::mutex mu;
  std::condition_variable cv;
  std::function<void()> next = [&] {
    const int i = sent++;
    if (i >= kTotal) return;
    process->Call("event", Event(i), 10s, [&](sb::util::Result<sb::util::Json> r) {
      if (!r) ++failed;
      if (++done == kTotal) {
        std::lock_guard lock(mu);
        cv.notify_all();
      }
      next();
    });
  };
  const auto t0 = Clock::now();
  for (int i = 0; i < kConcurrent; ++i) next();
  {
    std::unique_lock lock(mu);
    cv.wait_for(lock, 120s, [&] { return done.load() == kTotal; });
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  figures.done = done.load();
  figures.failed = failed.load();
  figures.events_per_second = done.load() / seconds;
  StopProcess(process);
  return figures;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "examples/plugins/greeter";
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread thread([&] { io.run(); });

  const Figures plain = Measure(io, dir, false);
  const Figures boxed = Measure(io, dir, true);
  fmt::print("| measure | plain process | in its sandbox |\n|---|---|---|\n");
  fmt::print("| start to answered handshake, p50 of 20 | {:.1f} ms | {:.1f} ms |\n",
             plain.start_ms_p50, boxed.start_ms_p50);
  fmt::print(
      "| event round trip, one at a time (5000 after 500 warm-up), p50 / p99 | {:.0f} / {:.0f} µs "
      "| {:.0f} / {:.0f} µs |\n",
      plain.p50, plain.p99, boxed.p50, boxed.p99);
  fmt::print(
      "| events per second, 64 in flight (50000 events; failed {} / {}) | {:.0f} | {:.0f} |\n",
      plain.failed, boxed.failed, plain.events_per_second, boxed.events_per_second);
  work.reset();
  io.stop();
  thread.join();
  return 0;
}
