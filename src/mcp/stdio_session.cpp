#include "mcp/stdio_session.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <deque>
#include <mutex>

#include "net/stream_parsers.hpp"
#include "sandbox/child_process.hpp"

namespace sb::mcp {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using util::ErrorCode;
using namespace std::chrono_literals;

namespace {

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kStderrLineBytes = 1000;    // one logged line, cut
constexpr std::size_t kStderrTailLines = 50;      // kept for StderrTail and error messages
constexpr int kStderrLoggedLines = 1000;          // per session; then one note and silence
constexpr std::size_t kMaxQueuedBytes = 8 << 20;  // unsent input: the server does not read it

std::atomic<int> launches{0};

// The sandbox probe runs once per server process (a few milliseconds, blocking).
const util::Result<void>& Probe(const sandbox::SandboxOptions& options) {
  static std::once_flag once;
  static util::Result<void> probed;
  std::call_once(once, [&] { probed = sandbox::ProbeSandbox(options); });
  return probed;
}

bool Inside(const fs::path& path, const fs::path& folder) {
  auto p = path.begin();
  for (auto f = folder.begin(); f != folder.end(); ++f, ++p) {
    if (f->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *f) return false;
  }
  return true;
}

}  // namespace

std::vector<fs::path> OwnFolders(const std::vector<std::string>& argv,
                                 const fs::path& protected_dir) {
  static constexpr std::array<std::string_view, 11> kSystem = {
      "/usr",    "/bin", "/sbin", "/lib", "/lib64", "/lib32",
      "/libx32", "/etc", "/proc", "/dev", "/sys"};
  std::error_code ec;
  const fs::path guarded =
      protected_dir.empty() ? fs::path() : fs::weakly_canonical(fs::absolute(protected_dir), ec);
  std::vector<fs::path> out;
  for (const auto& arg : argv) {
    if (arg.empty() || arg.front() != '/') continue;
    fs::path folder = fs::weakly_canonical(arg, ec);
    if (ec || !fs::exists(folder, ec)) continue;
    if (!fs::is_directory(folder, ec)) folder = folder.parent_path();
    if (folder.parent_path() == folder || folder.parent_path() == folder.root_path()) continue;
    bool skip = false;
    for (auto system : kSystem) skip = skip || Inside(folder, fs::path(system));
    if (!guarded.empty()) skip = skip || Inside(folder, guarded) || Inside(guarded, folder);
    for (const auto& known : out) skip = skip || known == folder;
    if (!skip) out.push_back(folder);
  }
  return out;
}

// Everything the readers, the writer and the reaper share; it outlives the session object while
// they run, so a session dropped mid-call is safe. Touched only on the session's executor.
struct StdioSession::State {
  explicit State(asio::any_io_executor executor)
      : pending(executor),
        in(executor),
        out(executor),
        err(executor),
        exit_signal(executor),
        stderr_signal(executor) {}

  PendingRequests pending;
  asio::posix::stream_descriptor in, out, err;
  asio::steady_timer exit_signal;    // cancelled once the process is reaped
  asio::steady_timer stderr_signal;  // cancelled once stderr ends
  std::string name;
  std::vector<std::string> secrets;  // the env values, masked in anything logged or shown
  std::size_t max_line_bytes = 1 << 20;
  int pid = -1;
  std::shared_ptr<void> resources;  // the sandbox's cgroup and seccomp descriptor
  bool ended = false;               // no more calls: the process ended or was told to
  bool reaping = false;
  bool exited = false;
  bool closing = false;
  bool stderr_ended = false;
  bool tools_changed = false;
  int exit_status = 0;
  std::deque<std::string> writes;
  std::size_t queued_bytes = 0;
  bool writing = false;
  bool stdin_closed = false;
  std::deque<std::string> stderr_tail;
  int stderr_logged = 0;

  std::string Mask(std::string text) const {
    for (const auto& secret : secrets) {
      if (secret.size() < 4) continue;  // "1" or "yes" would mangle every line
      for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 4)) {
        text.replace(at, secret.size(), "****");
      }
    }
    return text;
  }

  void Send(std::shared_ptr<State> self, std::string line) {
    if (stdin_closed) return;
    line.push_back('\n');
    queued_bytes += line.size();
    writes.push_back(std::move(line));
    if (!writing) asio::co_spawn(in.get_executor(), WriteAll(std::move(self)), asio::detached);
  }

  static asio::awaitable<void> WriteAll(std::shared_ptr<State> s) {
    s->writing = true;
    while (!s->writes.empty() && !s->stdin_closed) {
      // The front string stays put until this write ends (CloseStdin leaves it to us).
      auto [ec, n] = co_await asio::async_write(s->in, asio::buffer(s->writes.front()), kUseTuple);
      if (ec || s->stdin_closed) break;  // closed, or the server closed its stdin or died
      s->queued_bytes -= s->writes.front().size();
      s->writes.pop_front();
    }
    s->writing = false;
    if (!s->writes.empty()) s->CloseStdin();
  }

  void CloseStdin() {
    stdin_closed = true;
    if (!writing) {
      writes.clear();
      queued_bytes = 0;
    }
    boost::system::error_code ignored;
    in.close(ignored);
  }

  // The session is over: every waiting call fails with `why`; `kill` ends the process now.
  void End(std::shared_ptr<State> self, const util::Error& why, bool kill) {
    if (!ended) {
      ended = true;
      pending.FailAll(why);
    }
    if (kill && pid > 0 && !exited) ::kill(-pid, SIGKILL);
    StartReaping(std::move(self));
  }

  void StartReaping(std::shared_ptr<State> self) {
    if (reaping || pid <= 0) return;
    reaping = true;
    asio::co_spawn(exit_signal.get_executor(), Reap(std::move(self)), asio::detached);
  }

  // Waits for the process without blocking the executor. Outside a Close (whose own timers
  // decide), a process that lives on without its stdout is killed after two seconds.
  static asio::awaitable<void> Reap(std::shared_ptr<State> s) {
    asio::steady_timer poll(s->exit_signal.get_executor());
    for (int polls = 0;; ++polls) {
      int status = 0;
      const pid_t r = ::waitpid(s->pid, &status, WNOHANG);
      if (r == s->pid || (r < 0 && errno == ECHILD)) {
        s->exited = true;
        s->exit_status = r == s->pid ? status : 0;
        ::kill(-s->pid, SIGKILL);  // what the server started dies with it
        s->resources.reset();      // and its cgroup with anything left in it
        s->CloseStdin();
        boost::system::error_code ignored;
        s->out.close(ignored);
        s->err.close(ignored);
        s->exit_signal.cancel();
        co_return;
      }
      if (polls == 200 && !s->closing) ::kill(-s->pid, SIGKILL);
      poll.expires_after(10ms);
      co_await poll.async_wait(kUseTuple);
    }
  }

  void OnLine(std::shared_ptr<State> self, std::string_view line) {
    Message m = ParseMessage(line);
    switch (m.kind) {
      case Message::Kind::kInvalid:
        // The spec forbids anything but MCP messages on stdout: the server is broken.
        return End(std::move(self), InvalidRpc(m.invalid_reason), true);
      case Message::Kind::kResponse:
        pending.Deliver(std::move(m));  // a late answer (after its deadline) is dropped
        return;
      case Message::Kind::kRequest:
        if (m.method == "ping") return Send(std::move(self), BuildResult(m.id, {}));
        return Send(std::move(self), BuildError(m.id, -32601, "Method not found"));
      case Message::Kind::kNotification:
        if (m.method == "notifications/tools/list_changed") tools_changed = true;
        return;
    }
  }

  static asio::awaitable<void> ReadStdout(std::shared_ptr<State> s) {
    net::LineSplitter lines;
    lines.max_line_bytes = s->max_line_bytes;
    std::array<char, 16384> buffer;
    for (;;) {
      auto [ec, n] = co_await s->out.async_read_some(asio::buffer(buffer), kUseTuple);
      if (ec) break;
      const bool fits = lines.Feed(std::string_view(buffer.data(), n), [&](std::string_view line) {
        if (!s->ended) s->OnLine(s, line);
      });
      if (!fits) {
        s->End(s, TooLong(s->max_line_bytes), true);
        co_return;
      }
      if (s->ended) co_return;
    }
    if (s->ended) co_return;
    // Its last words on stderr make the reason ("can't open file ..."): wait for them briefly.
    if (!s->stderr_ended) {
      s->stderr_signal.expires_after(500ms);
      co_await s->stderr_signal.async_wait(kUseTuple);
    }
    std::string why = "the MCP server's process ended";
    if (!s->stderr_tail.empty()) why += ": " + s->stderr_tail.back();
    s->End(s, util::Error{ErrorCode::kUnavailable, why}, false);
  }

  void OnStderrLine(std::string line) {
    if (line.size() > kStderrLineBytes) line.resize(kStderrLineBytes);
    line = Mask(std::move(line));
    if (line.empty()) return;
    if (stderr_logged < kStderrLoggedLines) {
      spdlog::info("mcp server {}: {}", name, line);
    } else if (stderr_logged == kStderrLoggedLines) {
      spdlog::info("mcp server {}: further stderr output is not logged", name);
    }
    ++stderr_logged;
    stderr_tail.push_back(std::move(line));
    if (stderr_tail.size() > kStderrTailLines) stderr_tail.pop_front();
  }

  static asio::awaitable<void> ReadStderr(std::shared_ptr<State> s) {
    std::string pending;
    std::array<char, 4096> buffer;
    for (;;) {
      auto [ec, n] = co_await s->err.async_read_some(asio::buffer(buffer), kUseTuple);
      if (ec) break;
      pending.append(buffer.data(), n);
      for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
        std::string line = pending.substr(0, nl);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        pending.erase(0, nl + 1);
        s->OnStderrLine(std::move(line));
      }
      if (pending.size() > kStderrLineBytes) {  // a long line is logged cut, not kept whole
        s->OnStderrLine(std::move(pending));
        pending.clear();
      }
    }
    if (!pending.empty()) s->OnStderrLine(std::move(pending));
    s->stderr_ended = true;
    s->stderr_signal.cancel();
  }
};

StdioSession::StdioSession(asio::any_io_executor executor, StdioTarget target,
                           StdioSettings settings, std::string folder, std::string name)
    : RpcSession(target.limits),
      executor_(std::move(executor)),
      target_(std::move(target)),
      settings_(std::move(settings)),
      folder_(std::move(folder)),
      name_(std::move(name)) {}

StdioSession::~StdioSession() {
  if (!state_) return;
  asio::dispatch(executor_, [s = state_] {
    s->End(s, util::Error{ErrorCode::kUnavailable, "the session was dropped"}, true);
  });
}

bool StdioSession::tools_changed() const {
  return tools_changed_ || (state_ && state_->tools_changed);
}

bool StdioSession::alive() const { return state_ && !state_->ended; }

int StdioSession::pid() const { return state_ ? state_->pid : -1; }

std::vector<std::string> StdioSession::StderrTail() const {
  if (!state_) return {};
  return {state_->stderr_tail.begin(), state_->stderr_tail.end()};
}

asio::awaitable<util::Result<std::vector<Tool>>> StdioSession::ListTools() {
  if (state_) state_->tools_changed = false;
  co_return co_await RpcSession::ListTools();
}

util::Result<sandbox::Launch> StdioSession::MakeLaunch() {
  if (target_.argv.empty() || target_.argv.front().empty()) {
    return util::Fail(ErrorCode::kInvalidArgument, "extra_args.command is empty");
  }
  if (settings_.data_root.empty()) {
    return util::Fail(ErrorCode::kInvalidArgument, "this server has no folder for stdio servers");
  }
  const fs::path folder = settings_.data_root / (folder_.empty() ? "unsaved" : folder_);
  std::error_code ec;
  fs::create_directories(folder, ec);
  fs::permissions(folder, fs::perms::owner_all, ec);
  if (ec) {
    return util::Fail(ErrorCode::kInternal,
                      fmt::format("cannot create the server's folder: {}", ec.message()));
  }
  sandbox::Launch launch;
  launch.dir = fs::absolute(folder, ec);
  launch.argv = target_.argv;
  launch.limits = settings_.limits;
  launch.limits.max_line_bytes = target_.limits.max_message_bytes;
  // A scrubbed environment: nothing of the server's, the operator's `env` on top (it may set
  // PATH or HOME itself).
  std::vector<std::pair<std::string, std::string>> env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                                          {"HOME", launch.dir.string()},
                                                          {"LANG", "C.UTF-8"},
                                                          {"PYTHONUNBUFFERED", "1"}};
  for (const auto& [key, value] : target_.env) {
    if (key.empty() || key.find('=') != std::string::npos || key.find('\0') != std::string::npos ||
        value.find('\0') != std::string::npos) {
      return util::Fail(ErrorCode::kInvalidArgument,
                        fmt::format("extra_args.env has an invalid name '{}'", key.substr(0, 64)));
    }
    std::erase_if(env, [&](const auto& kv) { return kv.first == key; });
    env.emplace_back(key, value);
  }
  for (const auto& [key, value] : env) launch.env.push_back(key + "=" + value);
  return launch;
}

asio::awaitable<util::Result<void>> StdioSession::Connect() {
  if (state_) co_return util::Fail(ErrorCode::kInternal, "the session was already started");
  auto launch = MakeLaunch();
  if (!launch) co_return tl::make_unexpected(launch.error());
  if (!settings_.sandbox.enabled) {
    sandbox_description_ = "none (plugins.sandbox: off)";
  } else {
    if (const auto& probed = Probe(settings_.sandbox); !probed) {
      co_return util::Fail(ErrorCode::kUnavailable,
                           fmt::format("no sandbox on this machine: {}; stdio servers do not run "
                                       "unless the admin sets plugins.sandbox: off",
                                       probed.error().message));
    }
    sandbox::SandboxSpec spec;
    spec.data_dir = launch->dir;
    spec.network = settings_.network;
    spec.hostname = "mcp";
    spec.read_only = OwnFolders(target_.argv, settings_.protected_dir);
    // Inside, only the bound folders exist: "/srv/a/../b/server.py" must be written as the
    // path that was bound.
    for (std::size_t i = 0; i < launch->argv.size(); ++i) {
      const std::string& arg = launch->argv[i];
      if (arg.empty() || arg.front() != '/') continue;
      std::error_code ec;
      fs::path real = fs::weakly_canonical(arg, ec);
      if (ec || !fs::exists(real, ec)) continue;
      for (const auto& folder : spec.read_only) {
        if (Inside(real, folder)) launch->argv[i] = real.string();
      }
    }
    spec.cgroup_name = fmt::format("sb-mcp-{}-{}-{}", folder_.substr(0, 8), ::getpid(), ++launches);
    std::string limits_note;
    if (auto ok = sandbox::EnterSandbox(settings_.sandbox, spec, *launch, &limits_note); !ok) {
      co_return tl::make_unexpected(ok.error());
    }
    sandbox_description_ =
        fmt::format("bubblewrap; network {}; {}", spec.network ? "on" : "off",
                    limits_note.empty() ? sandbox::Cgroup::Describe() : limits_note);
  }
  auto child = sandbox::SpawnChild(*launch);
  if (!child) co_return tl::make_unexpected(child.error());
  auto s = std::make_shared<State>(executor_);
  s->name = name_;
  for (const auto& kv : target_.env) s->secrets.push_back(kv.second);
  s->max_line_bytes = target_.limits.max_message_bytes;
  s->pid = child->pid;
  s->resources = std::move(launch->resources);
  s->in.assign(child->in);
  s->out.assign(child->out);
  s->err.assign(child->err);
  state_ = s;
  asio::co_spawn(executor_, State::ReadStdout(s), asio::detached);
  asio::co_spawn(executor_, State::ReadStderr(s), asio::detached);
  co_return util::Ok();
}

asio::awaitable<util::Result<util::Json>> StdioSession::Request(std::string_view method,
                                                                util::JsonObject params,
                                                                std::chrono::milliseconds timeout) {
  auto s = state_;
  if (!s || s->ended) {
    co_return util::Fail(ErrorCode::kUnavailable, "the MCP server's process is not running");
  }
  if (s->queued_bytes > kMaxQueuedBytes) {
    co_return util::Fail(ErrorCode::kUpstreamFailed, "the MCP server does not read its input");
  }
  const std::int64_t id = s->pending.Add();
  s->Send(s, BuildRequest(id, method, std::move(params)));
  co_return co_await s->pending.Wait(id, method, timeout);
}

asio::awaitable<util::Result<void>> StdioSession::Notify(std::string_view method) {
  auto s = state_;
  if (!s || s->ended) {
    co_return util::Fail(ErrorCode::kUnavailable, "the MCP server's process is not running");
  }
  s->Send(s, BuildNotification(method, {}));
  co_return util::Ok();
}

asio::awaitable<void> StdioSession::Close() {
  auto s = state_;
  if (!s) co_return;
  s->closing = true;
  if (!s->ended) {
    s->ended = true;
    s->pending.FailAll(util::Error{ErrorCode::kUnavailable, "the session is closing"});
  }
  // The spec's order: close its input, wait; SIGTERM, wait; SIGKILL.
  s->CloseStdin();
  s->StartReaping(s);
  auto wait = [&](std::chrono::milliseconds grace) -> asio::awaitable<void> {
    if (s->exited) co_return;
    s->exit_signal.expires_after(grace);
    co_await s->exit_signal.async_wait(kUseTuple);
  };
  co_await wait(settings_.stop_grace);
  if (!s->exited) ::kill(-s->pid, SIGTERM);
  co_await wait(settings_.stop_grace);
  if (!s->exited) ::kill(-s->pid, SIGKILL);
  for (int i = 0; i < 50 && !s->exited; ++i) co_await wait(100ms);
  if (!s->exited) spdlog::warn("mcp server {}: process {} was not reaped", name_, s->pid);
}

}  // namespace sb::mcp
