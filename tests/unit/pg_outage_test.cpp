// The PostgreSQL backend when the server goes away: refused and silent servers, a session killed
// mid-transaction, a server stopped and started again (a cluster of the test's own), and the
// LISTEN/NOTIFY listener through all of it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "storage/postgres/pg_database.hpp"
#include "storage/postgres/pg_listener.hpp"
#include "support/eventually.hpp"
#include "support/pg_private_cluster.hpp"
#include "support/pg_test_database.hpp"
#include "support/pg_test_helpers.hpp"

namespace sb::storage::postgres {
namespace {

using sql::Connection;
using test_support::QueryInt;
using test_support::RunSql;
using util::ErrorCode;
using util::Result;
using Ms = std::chrono::milliseconds;

constexpr const char* kPassword = "hunter2-s3cret";

// A TCP port on 127.0.0.1 that accepts connections into its backlog and never answers: a server
// that hangs. With `listening` false the port is closed again, so connecting is refused.
class SilentPort {
 public:
  explicit SilentPort(bool listening) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    if (listening) {
      listen(fd_, 16);
    } else {
      close(fd_);
      fd_ = -1;
    }
  }
  ~SilentPort() {
    if (fd_ >= 0) close(fd_);
  }
  std::string Url() const {
    return std::string("postgresql://sb:") + kPassword + "@127.0.0.1:" + std::to_string(port_) +
           "/sb";
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

void ExpectUnavailableWithoutPassword(const util::Error& error) {
  EXPECT_EQ(error.code, ErrorCode::kUnavailable) << error.message;
  EXPECT_EQ(error.message.rfind("database unavailable:", 0), 0u) << error.message;
  EXPECT_EQ(error.message.find(kPassword), std::string::npos) << error.message;
}

// Notifications received by a listener, for waiting on.
struct Inbox {
  void Add(const std::string& channel, const std::string& payload) {
    std::lock_guard lock(mutex);
    got.emplace_back(channel, payload);
  }
  bool Has(const std::string& channel, const std::string& payload) {
    std::lock_guard lock(mutex);
    for (const auto& [c, p] : got) {
      if (c == channel && p == payload) return true;
    }
    return false;
  }
  std::vector<std::pair<std::string, std::string>> Snapshot() {
    std::lock_guard lock(mutex);
    return got;
  }
  std::mutex mutex;
  std::vector<std::pair<std::string, std::string>> got;
};

TEST(PgOutage, OpenFailsUnavailableWhenNothingListens) {
  SilentPort closed(/*listening=*/false);
  const auto start = std::chrono::steady_clock::now();
  auto db = PgDatabase::Open(closed.Url(), {});
  ASSERT_FALSE(db);
  ExpectUnavailableWithoutPassword(db.error());
  EXPECT_NE(db.error().message.find("postgresql://sb:***@127.0.0.1"), std::string::npos)
      << db.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(PgOutage, OpenGivesUpOnASilentServerAfterTheConnectTimeout) {
  SilentPort silent(/*listening=*/true);
  const auto start = std::chrono::steady_clock::now();
  auto db = PgDatabase::Open(silent.Url(), {.connect_timeout_seconds = 2});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(db);
  ExpectUnavailableWithoutPassword(db.error());
  EXPECT_GE(took, std::chrono::milliseconds(1500));
  EXPECT_LT(took, std::chrono::seconds(8));
}

TEST(PgOutage, AnInvalidUrlIsAnInvalidArgumentWithThePasswordMasked) {
  auto db = PgDatabase::Open(
      std::string("postgresql://sb:") + kPassword + "@127.0.0.1/x?no_such_option=" + kPassword, {});
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(db.error().message.find(kPassword), std::string::npos) << db.error().message;
  EXPECT_NE(db.error().message.find("no_such_option"), std::string::npos) << db.error().message;
}

// The session is terminated (as an administrator or a failover would) in the middle of a body:
// nothing was committed, so the body runs again on a new connection.
TEST(PgOutage, ASessionKilledMidTransactionRunsTheBodyAgain) {
  test_support::PgTestDatabase pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  auto db = PgDatabase::Open(pg.url(), {});
  ASSERT_TRUE(db) << db.error().message;
  ASSERT_TRUE((*db)->Write([](Connection& c) { return c.Exec("CREATE TABLE t (id bigint)"); }));
  int runs = 0;
  std::string first_failure;
  auto r = (*db)->Write([&](Connection& c) -> Result<void> {
    ++runs;
    if (auto done = RunSql(c, "INSERT INTO t VALUES (1)"); !done) return done;
    if (runs == 1) {
      auto pid = QueryInt(c, "SELECT pg_backend_pid()");
      if (!pid) return tl::make_unexpected(pid.error());
      EXPECT_TRUE(pg.Admin("SELECT pg_terminate_backend(" + std::to_string(*pid) + ")"));
      auto after = QueryInt(c, "SELECT 1");
      EXPECT_FALSE(after);
      if (!after) first_failure = after.error().message;
      return after ? util::Ok() : tl::make_unexpected(after.error());
    }
    return util::Ok();
  });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(first_failure.rfind("database unavailable:", 0), 0u) << first_failure;
  auto n = (*db)->Read([](Connection& c) { return QueryInt(c, "SELECT count(*) FROM t"); });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 1);
}

TEST(PgOutage, ServerStoppedGivesUnavailableAndServiceResumesWhenItReturns) {
  test_support::PgPrivateCluster cluster(SB_PYTHON, SB_PG_CLUSTER_SCRIPT);
  ASSERT_TRUE(cluster.ok());
  auto opened = PgDatabase::Open(cluster.UrlWithPassword(kPassword),
                                 {.acquire_timeout = Ms(2000), .connect_timeout_seconds = 2});
  ASSERT_TRUE(opened) << opened.error().message;
  auto& db = **opened;
  ASSERT_TRUE(db.Write([](Connection& c) {
    return c.Exec("CREATE TABLE t (id bigint); INSERT INTO t VALUES (1)");
  }));
  // Several connections in the pool, so that several go stale with the server.
  {
    test_support::Rendezvous all_in(3);
    std::vector<std::thread> readers;
    for (int i = 0; i < 3; ++i) {
      readers.emplace_back([&] {
        auto r = db.Read([&](Connection&) -> Result<void> {
          EXPECT_TRUE(all_in.Arrive());
          return util::Ok();
        });
        EXPECT_TRUE(r);
      });
    }
    for (auto& reader : readers) reader.join();
  }
  EXPECT_GE(db.stats().open, 3);

  ASSERT_TRUE(cluster.Halt());
  for (int i = 0; i < 4; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto read = db.Read([](Connection& c) { return QueryInt(c, "SELECT count(*) FROM t"); });
    ASSERT_FALSE(read);
    ExpectUnavailableWithoutPassword(read.error());
    auto write = db.Write([](Connection& c) { return RunSql(c, "INSERT INTO t VALUES (2)"); });
    ASSERT_FALSE(write);
    ExpectUnavailableWithoutPassword(write.error());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
  auto reopen = PgDatabase::Open(cluster.UrlWithPassword(kPassword), {});
  ASSERT_FALSE(reopen);
  ExpectUnavailableWithoutPassword(reopen.error());

  ASSERT_TRUE(cluster.Resume());
  // The first call after the return already works: no restart of the process, no warm-up.
  auto write = db.Write([](Connection& c) { return RunSql(c, "INSERT INTO t VALUES (2)"); });
  ASSERT_TRUE(write) << write.error().message;
  auto n = db.Read([](Connection& c) { return QueryInt(c, "SELECT count(*) FROM t"); });
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 2);
}

// The pool is full of idle connections when the server restarts unnoticed: each is found dead
// when taken (or on its first statement) and replaced, and no caller sees an error.
TEST(PgOutage, IdleConnectionsOfARestartedServerAreReplacedQuietly) {
  test_support::PgPrivateCluster cluster(SB_PYTHON, SB_PG_CLUSTER_SCRIPT);
  ASSERT_TRUE(cluster.ok());
  auto opened = PgDatabase::Open(cluster.url(), {.pool_size = 4});
  ASSERT_TRUE(opened) << opened.error().message;
  auto& db = **opened;
  {
    test_support::Rendezvous all_in(4);
    std::vector<std::thread> readers;
    for (int i = 0; i < 4; ++i) {
      readers.emplace_back([&] {
        EXPECT_TRUE(db.Read([&](Connection&) -> Result<void> {
          EXPECT_TRUE(all_in.Arrive());
          return util::Ok();
        }));
      });
    }
    for (auto& reader : readers) reader.join();
  }
  ASSERT_TRUE(cluster.Halt());
  ASSERT_TRUE(cluster.Resume());
  for (int i = 0; i < 8; ++i) {
    auto one = db.Read([](Connection& c) { return QueryInt(c, "SELECT 1"); });
    ASSERT_TRUE(one) << "call " << i << ": " << one.error().message;
  }
}

TEST(PgListener, DeliversCommittedNotificationsOnly) {
  test_support::PgTestDatabase pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  auto db = PgDatabase::Open(pg.url(), {});
  ASSERT_TRUE(db) << db.error().message;
  Inbox inbox;
  auto listener = PgListener::Start(
      pg.url(), {"sb_events", "MixedCase"},
      {.on_notify = [&](const std::string& c, const std::string& p) { inbox.Add(c, p); }});
  ASSERT_TRUE(listener) << listener.error().message;
  ASSERT_TRUE((*listener)->WaitUntilListening(Ms(10000)));

  ASSERT_TRUE((*db)->Notify("sb_events", "hello"));
  auto rolled_back = (*db)->Write([](Connection& c) -> Result<void> {
    if (auto sent = Notify(c, "MixedCase", "rolled back"); !sent) return sent;
    return util::Fail(ErrorCode::kConflict, "no");
  });
  ASSERT_FALSE(rolled_back);
  ASSERT_TRUE((*db)->Write([](Connection& c) { return Notify(c, "MixedCase", "committed"); }));
  ASSERT_TRUE((*db)->Notify("not_listened", "x"));
  ASSERT_TRUE(test::Eventually([&] { return inbox.Has("MixedCase", "committed"); }));
  // Notifications arrive in commit order, so "hello" came first and the rolled-back one never.
  const std::vector<std::pair<std::string, std::string>> expected = {{"sb_events", "hello"},
                                                                     {"MixedCase", "committed"}};
  EXPECT_EQ(inbox.Snapshot(), expected);

  auto too_big = (*db)->Notify("sb_events", std::string(8000, 'x'));
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE((*db)->Notify("sb_events", std::string(7999, 'x')));
  auto no_channel = (*db)->Notify("", "x");
  ASSERT_FALSE(no_channel);
  EXPECT_EQ(no_channel.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(PgListener::Start(pg.url(), {std::string(64, 'c')}, {}));

  const auto start = std::chrono::steady_clock::now();
  (*listener)->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_FALSE((*listener)->listening());
}

TEST(PgListener, SurvivesAServerRestartAndSaysSo) {
  test_support::PgPrivateCluster cluster(SB_PYTHON, SB_PG_CLUSTER_SCRIPT);
  ASSERT_TRUE(cluster.ok());
  Inbox inbox;
  std::atomic<int> reconnects{0};
  auto listener = PgListener::Start(
      cluster.url(), {"sb_cache"},
      {.on_notify = [&](const std::string& c, const std::string& p) { inbox.Add(c, p); },
       .on_reconnect = [&] { ++reconnects; },
       .min_backoff = Ms(50),
       .max_backoff = Ms(500)});
  ASSERT_TRUE(listener) << listener.error().message;
  ASSERT_TRUE((*listener)->WaitUntilListening(Ms(10000)));
  {
    auto db = PgDatabase::Open(cluster.url(), {});
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE((*db)->Notify("sb_cache", "before"));
  }
  ASSERT_TRUE(test::Eventually([&] { return inbox.Has("sb_cache", "before"); }));
  EXPECT_EQ(reconnects.load(), 0);

  ASSERT_TRUE(cluster.Halt());
  ASSERT_TRUE(test::Eventually([&] { return !(*listener)->listening(); }, Ms(10000)));
  ASSERT_TRUE(cluster.Resume());
  ASSERT_TRUE(test::Eventually([&] { return (*listener)->listening() && reconnects.load() == 1; },
                               Ms(15000)));
  EXPECT_EQ((*listener)->connection_count(), 2);
  {
    auto db = PgDatabase::Open(cluster.url(), {});
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE((*db)->Notify("sb_cache", "after"));
  }
  EXPECT_TRUE(test::Eventually([&] { return inbox.Has("sb_cache", "after"); }));
}

TEST(PgListener, StopIsPromptWhateverTheServerDoes) {
  for (bool listening : {false, true}) {
    SCOPED_TRACE(listening ? "silent server" : "refused");
    SilentPort port(listening);
    std::atomic<int> reconnects{0};
    auto listener =
        PgListener::Start(port.Url(), {"sb_cache"},
                          {.on_reconnect = [&] { ++reconnects; }, .connect_timeout_seconds = 30});
    ASSERT_TRUE(listener) << listener.error().message;
    EXPECT_FALSE((*listener)->WaitUntilListening(Ms(300)));
    const auto start = std::chrono::steady_clock::now();
    (*listener)->Stop();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
    EXPECT_EQ(reconnects.load(), 0);
  }
}

}  // namespace
}  // namespace sb::storage::postgres
