// Plugin event round trips through the real process and pipes: the example greeter plugin
// (examples/plugins/greeter, Python) answers message_received events. Prints a Markdown table for
// docs/performance.md (bench/run.sh writes it there).
//   build/bench/sb_plugin_bench examples/plugins/greeter
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "plugins/plugin_process.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class QuietHost final : public sb::plugins::PluginHost {
 public:
  void HandlePluginCall(const std::string&, const sb::util::JsonObject&,
                        std::function<void(sb::util::Result<sb::util::Json>)> answer) override {
    answer(sb::util::Json(sb::util::JsonObject()));
  }
  void OnPluginLog(const std::string&) override {}
};

sb::util::JsonObject Event(int i) {
  return {{"event", "message_received"}, {"bot_uuid", "bench"},   {"session_id", "person_1"},
          {"sender_id", "u1"},           {"launcher_type", "person"},
          {"text", fmt::format("message number {}", i)}};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "examples/plugins/greeter";
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread thread([&] { io.run(); });

  sb::plugins::PluginLaunch launch;
  launch.dir = dir;
  launch.argv = {"python3", "main.py"};
  launch.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "PYTHONUNBUFFERED=1"};
  auto process = sb::plugins::PluginProcess::Spawn(io.get_executor(), launch,
                                                   std::make_shared<QuietHost>(), nullptr);
  if (!process) {
    fmt::print(stderr, "cannot start the plugin: {}\n", process.error().message);
    return 1;
  }
  auto call = [&](const std::string& action, sb::util::JsonObject data) {
    std::promise<sb::util::Result<sb::util::Json>> p;
    auto f = p.get_future();
    (*process)->Call(action, std::move(data), 10s, [&p](auto r) { p.set_value(std::move(r)); });
    return f.get();
  };
  if (auto hello = call("handshake", {{"protocol_versions", {1}}, {"config", sb::util::JsonObject{}}});
      !hello) {
    fmt::print(stderr, "handshake failed: {}\n", hello.error().message);
    return 1;
  }

  // 1. One at a time: the latency a message sees per plugin.
  constexpr int kWarmup = 500, kSequential = 5000;
  std::vector<double> micros;
  for (int i = 0; i < kWarmup + kSequential; ++i) {
    const auto t0 = Clock::now();
    auto r = call("event", Event(i));
    const auto us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (!r) {
      fmt::print(stderr, "event failed: {}\n", r.error().message);
      return 1;
    }
    if (i >= kWarmup) micros.push_back(us);
  }
  std::sort(micros.begin(), micros.end());
  const double p50 = micros[micros.size() / 2];
  const double p99 = micros[micros.size() * 99 / 100];

  // 2. Many in flight: events per second one plugin process sustains.
  constexpr int kConcurrent = 64, kTotal = 50000;
  std::atomic<int> sent{0}, done{0}, failed{0};
  std::mutex mu;
  std::condition_variable cv;
  std::function<void()> next = [&] {
    const int i = sent++;
    if (i >= kTotal) return;
    (*process)->Call("event", Event(i), 10s, [&](sb::util::Result<sb::util::Json> r) {
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

  fmt::print("| measure | value |\n|---|---|\n");
  fmt::print("| event round trip, one at a time ({} events after {} warm-up), p50 / p99 | {:.0f} µs / {:.0f} µs |\n",
             kSequential, kWarmup, p50, p99);
  fmt::print("| events per second, {} in flight ({} events, {} failed) | {:.0f} |\n", kConcurrent,
             done.load(), failed.load(), done.load() / seconds);

  std::promise<void> stopped;
  (*process)->Stop(2s, [&] { stopped.set_value(); });
  stopped.get_future().wait_for(10s);
  work.reset();
  io.stop();
  thread.join();
  return 0;
}
