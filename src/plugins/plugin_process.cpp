#include "plugins/plugin_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <utility>

namespace sb::plugins {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using util::ErrorCode;

class AsioPluginProcess final : public PluginProcess,
                                public std::enable_shared_from_this<AsioPluginProcess> {
 public:
  AsioPluginProcess(asio::any_io_executor executor, std::shared_ptr<PluginHost> host,
                    std::function<void(int)> on_exit, const ProcessLimits& limits, int pid, int in,
                    int out, int err, std::shared_ptr<void> resources)
      : strand_(asio::make_strand(executor)),
        resources_(std::move(resources)),
        host_(std::move(host)),
        on_exit_(std::move(on_exit)),
        limits_(limits),
        pid_(pid),
        stdin_(strand_, in),
        stdout_(strand_, out),
        stderr_(strand_, err),
        reap_timer_(strand_),
        kill_timer_(strand_) {}

  void Begin() {
    auto self = shared_from_this();
    asio::dispatch(strand_, [self] {
      self->ReadStdout();
      self->ReadStderr();
    });
  }

  void Call(std::string action, util::JsonObject data, std::chrono::milliseconds deadline,
            Done done) override {
    auto self = shared_from_this();
    asio::dispatch(strand_, [self, action = std::move(action), data = std::move(data), deadline,
                             done = std::move(done)]() mutable {
      if (self->stopping_ || self->ended_) {
        return done(util::Fail(ErrorCode::kUnavailable, "the plugin is not running"));
      }
      const std::int64_t seq = ++self->next_seq_;
      auto timer = std::make_shared<asio::steady_timer>(self->strand_, deadline);
      self->pending_.emplace(seq, PendingCall{std::move(done), timer});
      timer->async_wait([self, seq, action, deadline](const boost::system::error_code& ec) {
        if (ec) return;
        self->Finish(seq, util::Fail(ErrorCode::kUpstreamTimeout,
                                     fmt::format("the plugin did not answer {} within {} ms",
                                                 action, deadline.count())));
      });
      util::JsonObject request;
      request["seq_id"] = seq;
      request["action"] = action;
      request["data"] = std::move(data);
      self->Send(request);
    });
  }

  void Stop(std::chrono::milliseconds grace, std::function<void()> stopped) override {
    auto self = shared_from_this();
    asio::dispatch(strand_, [self, grace, stopped = std::move(stopped)]() mutable {
      if (stopped) self->stopped_.push_back(std::move(stopped));
      if (self->ended_) return self->RunStopped();
      if (self->stopping_) return;
      self->stopping_ = true;
      self->FailAll("the plugin is stopping");
      util::JsonObject request;
      request["seq_id"] = ++self->next_seq_;
      request["action"] = "shutdown";
      request["data"] = util::JsonObject();
      self->Send(request);
      self->close_stdin_after_writes_ = true;
      self->MaybeCloseStdin();
      self->kill_timer_.expires_after(grace);
      self->kill_timer_.async_wait([self, grace](const boost::system::error_code& ec) {
        if (ec || self->ended_) return;
        ::kill(-self->pid_, SIGTERM);
        // A descendant that keeps the plugin's stdout open would hide its end from the read
        // (and keep this object alive through it): wait for the process itself.
        self->StartReaping();
        self->kill_timer_.expires_after(grace);
        self->kill_timer_.async_wait([self](const boost::system::error_code& ec2) {
          if (!ec2 && !self->ended_) ::kill(-self->pid_, SIGKILL);
        });
      });
    });
  }

  int pid() const override { return pid_; }

  std::size_t Pending() const override {
    std::lock_guard lock(count_mu_);
    return pending_count_;
  }

 private:
  struct PendingCall {
    Done done;
    std::shared_ptr<asio::steady_timer> timer;
  };

  void UpdateCount() {
    std::lock_guard lock(count_mu_);
    pending_count_ = pending_.size();
  }

  void Finish(std::int64_t seq, util::Result<util::Json> result) {
    auto it = pending_.find(seq);
    if (it == pending_.end()) return;  // already ended (timeout, then a late answer)
    auto call = std::move(it->second);
    pending_.erase(it);
    UpdateCount();
    call.timer->cancel();
    call.done(std::move(result));
  }

  void FailAll(const std::string& why) {
    auto pending = std::move(pending_);
    pending_.clear();
    UpdateCount();
    for (auto& [seq, call] : pending) {
      call.timer->cancel();
      call.done(util::Fail(ErrorCode::kUnavailable, why));
    }
  }

  void Send(const util::JsonObject& message) {
    if (stdin_closed_) return;
    std::string line = boost::json::serialize(message);
    line += '\n';
    writes_.push_back(std::move(line));
    UpdateCount();
    if (writes_.size() == 1) WriteNext();
  }

  void WriteNext() {
    auto self = shared_from_this();
    asio::async_write(stdin_, asio::buffer(writes_.front()),
                      [self](const boost::system::error_code& ec, std::size_t) {
                        self->writes_.pop_front();
                        if (ec) {
                          // The plugin closed its stdin or died: its stdout's end says the rest.
                          self->writes_.clear();
                          self->CloseStdin();
                          return;
                        }
                        if (!self->writes_.empty()) return self->WriteNext();
                        self->MaybeCloseStdin();
                      });
  }

  void MaybeCloseStdin() {
    if (close_stdin_after_writes_ && writes_.empty()) CloseStdin();
  }

  void CloseStdin() {
    if (stdin_closed_) return;
    stdin_closed_ = true;
    boost::system::error_code ignored;
    stdin_.close(ignored);
  }

  void ReadStdout() {
    auto self = shared_from_this();
    asio::async_read_until(stdout_, asio::dynamic_buffer(out_buffer_, limits_.max_line_bytes), '\n',
                           [self](const boost::system::error_code& ec, std::size_t n) {
                             if (ec) {
                               if (ec == asio::error::not_found) {
                                 self->host_->OnPluginLog(fmt::format(
                                     "protocol: a line longer than {} bytes; the plugin is stopped",
                                     self->limits_.max_line_bytes));
                                 ::kill(-self->pid_, SIGKILL);
                               }
                               return self->OnStdoutEnd();
                             }
                             std::string line = self->out_buffer_.substr(0, n - 1);
                             self->out_buffer_.erase(0, n);
                             self->OnLine(line);
                             self->ReadStdout();
                           });
  }

  void ReadStderr() {
    auto self = shared_from_this();
    asio::async_read_until(stderr_, asio::dynamic_buffer(err_buffer_, 64 * 1024), '\n',
                           [self](const boost::system::error_code& ec, std::size_t n) {
                             if (ec == asio::error::not_found) {
                               // A long line is logged in pieces rather than lost.
                               self->host_->OnPluginLog(self->err_buffer_);
                               self->err_buffer_.clear();
                               return self->ReadStderr();
                             }
                             if (ec) return;
                             std::string line = self->err_buffer_.substr(0, n - 1);
                             self->err_buffer_.erase(0, n);
                             if (!line.empty()) self->host_->OnPluginLog(line);
                             self->ReadStderr();
                           });
  }

  void OnLine(const std::string& line) {
    if (line.empty() || line == "\r") return;
    auto parsed = util::ParseJson(line);
    const auto* message = parsed ? parsed->if_object() : nullptr;
    const auto* seq = message ? message->if_contains("seq_id") : nullptr;
    if (!message || !seq || !seq->is_int64()) {
      host_->OnPluginLog("protocol: ignored a line that is not {seq_id, ...} JSON");
      return;
    }
    if (const auto* action = message->if_contains("action")) {
      return OnRequest(seq->as_int64(), action, *message);
    }
    const auto* code = message->if_contains("code");
    if (!code || !code->is_int64()) {
      host_->OnPluginLog("protocol: ignored a response without an integer code");
      return;
    }
    util::Json data = nullptr;
    if (const auto* d = message->if_contains("data")) data = *d;
    if (code->as_int64() == 0) return Finish(seq->as_int64(), std::move(data));
    std::string text = "the plugin answered with an error";
    if (const auto* m = message->if_contains("message"); m && m->is_string()) {
      text = fmt::format("the plugin answered: {}", std::string_view(m->as_string()));
    }
    Finish(seq->as_int64(), util::Fail(ErrorCode::kUpstreamFailed, std::move(text)));
  }

  void OnRequest(std::int64_t seq, const util::Json* action, const util::JsonObject& message) {
    util::JsonObject data;
    if (const auto* d = message.if_contains("data"); d && d->is_object()) data = d->as_object();
    auto self = shared_from_this();
    auto answer = [self, seq](util::Result<util::Json> result) {
      asio::dispatch(self->strand_, [self, seq, result = std::move(result)]() mutable {
        util::JsonObject response;
        response["seq_id"] = seq;
        if (result) {
          response["code"] = 0;
          response["message"] = "ok";
          response["data"] = std::move(*result);
        } else {
          response["code"] = -1;
          response["message"] = result.error().message;
          response["data"] = nullptr;
        }
        self->Send(response);
      });
    };
    if (!action->is_string())
      return answer(util::Fail(ErrorCode::kInvalidArgument, "action must be a string"));
    host_->HandlePluginCall(std::string(action->as_string()), data, std::move(answer));
  }

  void OnStdoutEnd() {
    FailAll("the plugin's process ended");
    CloseStdin();
    StartReaping();
  }

  // Once the plugin closed its stdout, or was sent SIGTERM by Stop.
  void StartReaping() {
    if (reaping_ || ended_) return;
    reaping_ = true;
    Reap();
  }

  // Waits for the process without blocking the strand. Outside a Stop (whose timers decide), a
  // process that keeps running without its stdout is killed after two seconds. Once reaped, the
  // pipes are closed even if a descendant still holds the other ends: the reads and writes still
  // pending end with operation_aborted and release this object.
  void Reap() {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      ended_ = true;
      ::kill(-pid_, SIGKILL);  // what the plugin started dies with it
      resources_.reset();      // and its sandbox's cgroup with anything left in it
      boost::system::error_code ignored;
      kill_timer_.cancel();
      FailAll("the plugin's process ended");
      CloseStdin();
      stdout_.close(ignored);
      stderr_.close(ignored);
      if (on_exit_) std::exchange(on_exit_, nullptr)(r == pid_ ? status : 0);
      RunStopped();
      return;
    }
    if (++reap_polls_ == 200 && !stopping_) ::kill(-pid_, SIGKILL);
    auto self = shared_from_this();
    reap_timer_.expires_after(std::chrono::milliseconds(10));
    reap_timer_.async_wait([self](const boost::system::error_code&) { self->Reap(); });
  }

  void RunStopped() {
    auto stopped = std::move(stopped_);
    stopped_.clear();
    for (auto& s : stopped) s();
  }

  asio::strand<asio::any_io_executor> strand_;
  std::shared_ptr<void> resources_;  // guarded by the strand; released when reaped
  std::shared_ptr<PluginHost> host_;
  std::function<void(int)> on_exit_;
  const ProcessLimits limits_;
  const int pid_;
  asio::posix::stream_descriptor stdin_;
  asio::posix::stream_descriptor stdout_;
  asio::posix::stream_descriptor stderr_;
  asio::steady_timer reap_timer_;
  asio::steady_timer kill_timer_;
  // Guarded by the strand:
  std::string out_buffer_;
  std::string err_buffer_;
  std::deque<std::string> writes_;
  std::map<std::int64_t, PendingCall> pending_;
  std::int64_t next_seq_ = 0;
  bool stopping_ = false;
  bool ended_ = false;
  bool reaping_ = false;
  bool stdin_closed_ = false;
  bool close_stdin_after_writes_ = false;
  int reap_polls_ = 0;
  std::vector<std::function<void()>> stopped_;
  // Read from any thread:
  mutable std::mutex count_mu_;
  std::size_t pending_count_ = 0;  // guarded by count_mu_
};

}  // namespace

util::Result<std::shared_ptr<PluginProcess>> PluginProcess::Spawn(
    asio::any_io_executor executor, PluginLaunch launch, std::shared_ptr<PluginHost> host,
    std::function<void(int)> on_exit) {
  auto child = sandbox::SpawnChild(launch);
  if (!child) return tl::unexpected(child.error());
  const int pid = child->pid;
  const int in_write = child->in, out_read = child->out, err_read = child->err;
  // Our ends must not leak into later children either (they are CLOEXEC already).
  auto process = std::make_shared<AsioPluginProcess>(
      std::move(executor), std::move(host), std::move(on_exit), launch.limits, pid, in_write,
      out_read, err_read, std::move(launch.resources));
  process->Begin();
  return process;
}

}  // namespace sb::plugins
