// LISTEN/NOTIFY: a PgListener keeps one connection of its own LISTENing on a few channels and
// hands every notification to a callback; Notify sends one from inside a write transaction.
//   auto listener = PgListener::Start(url, {"sb_cache"}, {.on_notify = [](auto& ch, auto& p) {..},
//                                                          .on_reconnect = [] { ReloadAll(); }});
//   db.Write([&](sql::Connection& c) { ...; return Notify(c, "sb_cache", "bots"); });
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "storage/sql/database.hpp"
#include "util/error.hpp"

namespace sb::storage::postgres {

struct ConnectSettings;

// Queues a notification in the caller's transaction (`SELECT pg_notify(channel, payload)`, so it
// must be a write transaction): PostgreSQL delivers it when the transaction commits and never if
// it rolls back; identical (channel, payload) pairs within one transaction are delivered once.
// kInvalidArgument for an empty channel or one over 63 bytes, or a payload of 8000 bytes or more
// (the server's limits).
util::Result<void> Notify(sql::Connection& c, std::string_view channel, std::string_view payload);

struct PgListenerOptions {
  // Called on the listener's thread, one notification at a time, in the order sent; keep it
  // short (it delays the next one). Exceptions are caught and logged.
  std::function<void(const std::string& channel, const std::string& payload)> on_notify{};
  // Called on the listener's thread each time LISTEN is in place again after the connection was
  // lost: notifications sent meanwhile are gone, so whatever they keep fresh must be reloaded.
  std::function<void()> on_reconnect{};
  int connect_timeout_seconds = 5;
  std::chrono::milliseconds min_backoff{100};   // first wait after a failure, doubling ...
  std::chrono::milliseconds max_backoff{5000};  // ... up to this
  std::string application_name = "switchboard-listener";
};

// Owns one thread. Stop (or destruction) returns at once whatever the server does (unless a
// callback is running): every wait polls the socket together with a wake-up descriptor. Do not
// destroy the listener from inside its own callbacks.
class PgListener {
 public:
  // Checks the URL and channel names (kInvalidArgument, password masked) and starts the thread;
  // the server need not be up yet. WaitUntilListening tells when LISTEN is in place.
  static util::Result<std::unique_ptr<PgListener>> Start(const std::string& url,
                                                         std::vector<std::string> channels,
                                                         PgListenerOptions options);
  ~PgListener();
  PgListener(const PgListener&) = delete;
  PgListener& operator=(const PgListener&) = delete;

  // Idempotent; no callback runs after it returns.
  void Stop();
  // True once LISTEN is in place on a live connection (false again while reconnecting).
  bool listening() const { return listening_.load(); }
  // Waits up to `limit` for listening(); true if it became so.
  bool WaitUntilListening(std::chrono::milliseconds limit);
  // How many times LISTEN was (re)established, for tests and metrics.
  int connection_count() const { return connection_count_.load(); }

 private:
  PgListener(std::unique_ptr<ConnectSettings> settings, std::vector<std::string> channels,
             PgListenerOptions options, int wake_fd);
  void Run();
  class Session;

  const std::unique_ptr<ConnectSettings> settings_;
  const std::vector<std::string> channels_;
  const PgListenerOptions options_;
  const int wake_fd_;  // an eventfd: Stop writes to it so every poll() returns at once

  std::atomic<bool> stopping_{false};
  std::atomic<bool> listening_{false};
  std::atomic<int> connection_count_{0};
  std::mutex mutex_;
  std::condition_variable listening_changed_;
  std::thread thread_;
};

}  // namespace sb::storage::postgres
