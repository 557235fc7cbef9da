#include "storage/postgres/pg_listener.hpp"

#include <errno.h>
#include <libpq-fe.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <utility>

#include "storage/postgres/pg_connection.hpp"

namespace sb::storage::postgres {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The server's limits: NAMEDATALEN - 1 for a channel, under 8000 bytes for a payload.
constexpr std::size_t kMaxChannel = 63;
constexpr std::size_t kMaxPayload = 7999;
// How often an idle listener looks up from poll() even when nothing happens; Stop does not
// depend on it (the wake-up descriptor ends every wait at once).
constexpr auto kIdlePoll = std::chrono::seconds(1);

util::Result<void> CheckChannel(std::string_view channel) {
  if (channel.empty() || channel.size() > kMaxChannel ||
      channel.find('\0') != std::string_view::npos) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "a notification channel is 1 to 63 bytes without NUL");
  }
  return util::Ok();
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

struct ConnDeleter {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
using ConnPtr = std::unique_ptr<PGconn, ConnDeleter>;

enum class Wait { kReady, kTimeout, kStopped };

// Waits for `events` on `fd` (none when fd < 0), the wake-up descriptor, or the deadline.
Wait PollFor(int fd, short events, int wake_fd, SteadyClock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now())
            .count();
    pollfd fds[2] = {{wake_fd, POLLIN, 0}, {fd, events, 0}};
    const int ready = poll(fds, fd >= 0 ? 2 : 1, static_cast<int>(std::max<long>(left, 0)));
    if (ready < 0 && errno == EINTR) continue;
    if ((fds[0].revents & POLLIN) != 0) return Wait::kStopped;
    if (ready == 0) return Wait::kTimeout;
    return Wait::kReady;  // including poll errors: libpq then finds what is wrong
  }
}

void IgnoreNotice(void*, const char* message) {
  // An idle connection gets the server's FATAL goodbye as a notice; libpq would print it.
  spdlog::debug("database listener notice: {}", FirstLineOf(message));
}

}  // namespace

util::Result<void> Notify(sql::Connection& c, std::string_view channel, std::string_view payload) {
  if (auto ok = CheckChannel(channel); !ok) return ok;
  if (payload.size() > kMaxPayload) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "a notification payload must be under 8000 bytes");
  }
  if (c.dialect() != sql::Dialect::kPostgres) {
    return util::Fail(util::ErrorCode::kInternal, "notifications need PostgreSQL");
  }
  auto statement = c.Prepare("SELECT pg_notify(?1, ?2)");
  if (!statement) return tl::make_unexpected(statement.error());
  statement->Bind(1, channel).Bind(2, payload);
  return statement->Run();
}

// One connection's life: connect, LISTEN, deliver until lost or stopped.
class PgListener::Session {
 public:
  Session(PgListener& owner) : owner_(owner) {}

  // The reason it failed, or empty when stopped.
  std::string Connect() {
    ConnectParams params(*owner_.settings_);
    conn_.reset(PQconnectStartParams(params.keys(), params.values(), /*expand_dbname=*/1));
    if (conn_ == nullptr || PQstatus(conn_.get()) == CONNECTION_BAD) return Message();
    PQsetNoticeProcessor(conn_.get(), IgnoreNotice, nullptr);
    // libpq leaves connect_timeout to the application in this asynchronous form.
    const auto deadline =
        SteadyClock::now() + std::chrono::seconds(owner_.options_.connect_timeout_seconds);
    PostgresPollingStatusType status = PGRES_POLLING_WRITING;
    for (;;) {
      if (status == PGRES_POLLING_OK) return {};
      if (status == PGRES_POLLING_FAILED) return Message();
      const short events = status == PGRES_POLLING_READING ? POLLIN : POLLOUT;
      switch (PollFor(PQsocket(conn_.get()), events, owner_.wake_fd_, deadline)) {
        case Wait::kStopped:
          return {};
        case Wait::kTimeout:
          return "no connection within " + std::to_string(owner_.options_.connect_timeout_seconds) +
                 " s";
        case Wait::kReady:
          break;
      }
      status = PQconnectPoll(conn_.get());
    }
  }

  std::string Listen() {
    std::string commands;
    for (const auto& channel : owner_.channels_) {
      commands.append("LISTEN ").append(QuoteIdentifier(channel)).append(";");
    }
    if (PQsendQuery(conn_.get(), commands.c_str()) == 0) return Message();
    const auto deadline =
        SteadyClock::now() + std::chrono::seconds(owner_.options_.connect_timeout_seconds);
    std::string failure;
    for (;;) {
      while (PQisBusy(conn_.get()) != 0) {
        switch (PollFor(PQsocket(conn_.get()), POLLIN, owner_.wake_fd_, deadline)) {
          case Wait::kStopped:
            return {};
          case Wait::kTimeout:
            return "LISTEN got no answer in time";
          case Wait::kReady:
            break;
        }
        if (PQconsumeInput(conn_.get()) == 0) return Message();
      }
      PGresult* result = PQgetResult(conn_.get());
      if (result == nullptr) break;
      if (PQresultStatus(result) != PGRES_COMMAND_OK && failure.empty()) {
        failure = FirstLineOf(PQresultErrorMessage(result));
      }
      PQclear(result);
    }
    if (failure.empty() && PQstatus(conn_.get()) != CONNECTION_OK) failure = Message();
    return failure;
  }

  // Delivers notifications until the connection fails (its reason) or Stop (empty).
  std::string Serve() {
    for (;;) {
      Deliver();
      if (PQstatus(conn_.get()) != CONNECTION_OK) return Message();
      switch (
          PollFor(PQsocket(conn_.get()), POLLIN, owner_.wake_fd_, SteadyClock::now() + kIdlePoll)) {
        case Wait::kStopped:
          return {};
        case Wait::kTimeout:
          continue;
        case Wait::kReady:
          break;
      }
      if (PQconsumeInput(conn_.get()) == 0) {
        Deliver();  // what came before the end still counts
        return Message();
      }
    }
  }

  void Close() { conn_.reset(); }

 private:
  void Deliver() {
    while (PGnotify* notify = PQnotifies(conn_.get())) {
      std::string channel = notify->relname;
      std::string payload = notify->extra != nullptr ? notify->extra : "";
      PQfreemem(notify);
      if (owner_.stopping_.load() || !owner_.options_.on_notify) continue;
      try {
        owner_.options_.on_notify(channel, payload);
      } catch (const std::exception& e) {
        spdlog::error("database listener: a notification handler failed: {}", e.what());
      }
    }
  }

  std::string Message() const { return ConnectionMessage(conn_.get(), *owner_.settings_); }

  PgListener& owner_;
  ConnPtr conn_;
};

util::Result<std::unique_ptr<PgListener>> PgListener::Start(const std::string& url,
                                                            std::vector<std::string> channels,
                                                            PgListenerOptions options) {
  if (channels.empty()) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "a listener needs at least one channel");
  }
  for (const auto& channel : channels) {
    if (auto ok = CheckChannel(channel); !ok) return tl::make_unexpected(ok.error());
  }
  auto settings = ParseConnectSettings(url);
  if (!settings) return tl::make_unexpected(settings.error());
  settings->application_name = options.application_name;
  settings->connect_timeout_seconds = std::max(1, options.connect_timeout_seconds);
  settings->statement_timeout = std::chrono::milliseconds(0);
  const int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) return util::Fail(util::ErrorCode::kInternal, "eventfd failed");
  std::unique_ptr<PgListener> listener(
      new PgListener(std::make_unique<ConnectSettings>(std::move(*settings)), std::move(channels),
                     std::move(options), wake_fd));
  listener->thread_ = std::thread([l = listener.get()] { l->Run(); });
  return listener;
}

PgListener::PgListener(std::unique_ptr<ConnectSettings> settings, std::vector<std::string> channels,
                       PgListenerOptions options, int wake_fd)
    : settings_(std::move(settings)),
      channels_(std::move(channels)),
      options_(std::move(options)),
      wake_fd_(wake_fd) {}

PgListener::~PgListener() {
  Stop();
  close(wake_fd_);
}

void PgListener::Stop() {
  if (!stopping_.exchange(true)) {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto written = write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool PgListener::WaitUntilListening(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  return listening_changed_.wait_for(lock, limit, [&] { return listening_.load(); });
}

void PgListener::Run() {
  std::minstd_rand random(std::random_device{}());
  auto backoff = options_.min_backoff;
  bool reported = false;  // one warning per outage, not one per attempt
  while (!stopping_.load()) {
    Session session(*this);
    std::string why = session.Connect();
    bool served = false;
    if (why.empty() && !stopping_.load()) why = session.Listen();
    if (why.empty() && !stopping_.load()) {
      served = true;
      const bool again = connection_count_.fetch_add(1) > 0;
      {
        std::lock_guard lock(mutex_);
        listening_ = true;
      }
      listening_changed_.notify_all();
      if (again) {
        spdlog::info("database listener on {} is listening again", settings_->masked_url);
        if (options_.on_reconnect) {
          try {
            options_.on_reconnect();
          } catch (const std::exception& e) {
            spdlog::error("database listener: the reconnect handler failed: {}", e.what());
          }
        }
      }
      reported = false;
      why = session.Serve();
      {
        std::lock_guard lock(mutex_);
        listening_ = false;
      }
    }
    session.Close();
    if (stopping_.load()) break;
    if (!reported) {
      spdlog::warn("database listener on {} lost its connection: {}; reconnecting",
                   settings_->masked_url, why);
      reported = true;
    }
    if (served) backoff = options_.min_backoff;
    std::uniform_int_distribution<long> pick(backoff.count() / 2, backoff.count());
    PollFor(-1, 0, wake_fd_, SteadyClock::now() + std::chrono::milliseconds(pick(random)));
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace sb::storage::postgres
