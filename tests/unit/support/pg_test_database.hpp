// A fresh PostgreSQL database for one test, on the throw-away cluster that the ctest fixture `pg`
// starts (tests/tools/pg_cluster.py; its URL is in the file SB_TEST_PG_URL_FILE names). Without
// that variable, or when the cluster does not answer, the test FAILS rather than skips: CI must
// run the PostgreSQL tests. Declare the need in CMake with sb_pg_unit_test (tests/CMakeLists.txt).
//   test_support::PgTestDatabase pg;
//   ASSERT_TRUE(pg.ok()) << pg.error();
//   auto db = storage::postgres::PgDatabase::Open(pg.url(), {});
#pragma once

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

namespace sb::test_support {

class PgTestDatabase {
 public:
  PgTestDatabase() {
    const char* url_file = std::getenv("SB_TEST_PG_URL_FILE");
    if (url_file == nullptr || *url_file == '\0') {
      Failed(
          "SB_TEST_PG_URL_FILE is not set: run this test through ctest, whose fixture `pg` "
          "starts a PostgreSQL cluster (tests/tools/pg_cluster.py), or point it at a file "
          "holding a postgresql:// URL");
      return;
    }
    std::ifstream in(url_file);
    std::getline(in, admin_url_);
    if (admin_url_.empty()) {
      Failed(std::string("no URL in ") + url_file + " (did the pg_cluster_start test fail?)");
      return;
    }
    std::random_device random;
    std::uniform_int_distribution<int> hex(0, 15);
    name_ = "sbt_";
    for (int i = 0; i < 16; ++i) name_.push_back("0123456789abcdef"[hex(random)]);
    if (!Admin("CREATE DATABASE " + name_)) return;
    url_ = ReplaceDatabase(admin_url_, name_);
  }

  ~PgTestDatabase() {
    if (!url_.empty()) Admin("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  }

  PgTestDatabase(const PgTestDatabase&) = delete;
  PgTestDatabase& operator=(const PgTestDatabase&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // The new database's URL, and the cluster's own (database `postgres`).
  const std::string& url() const { return url_; }
  const std::string& admin_url() const { return admin_url_; }
  const std::string& name() const { return name_; }

  // `url` naming database `name` instead: postgresql://user@host:port/<name>?params.
  static std::string ReplaceDatabase(const std::string& url, const std::string& name) {
    const std::size_t scheme = url.find("://");
    if (scheme == std::string::npos) return url;
    const std::size_t path = url.find('/', scheme + 3);
    const std::size_t query = url.find('?', scheme + 3);
    std::string out = url.substr(0, std::min(path, query));
    out.append("/").append(name);
    if (query != std::string::npos) out.append(url.substr(query));
    return out;
  }

  // Runs one statement on the cluster's `postgres` database; false (and the test failed) on error.
  bool Admin(const std::string& sql) {
    PGconn* conn = PQconnectdb(admin_url_.c_str());
    bool done = false;
    if (PQstatus(conn) != CONNECTION_OK) {
      Failed("cannot reach the test cluster at " + admin_url_ + ": " + PQerrorMessage(conn));
    } else {
      PGresult* result = PQexec(conn, sql.c_str());
      done =
          PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK;
      if (!done) Failed(sql + ": " + PQresultErrorMessage(result));
      PQclear(result);
    }
    PQfinish(conn);
    return done;
  }

 private:
  void Failed(std::string why) {
    if (error_.empty()) error_ = why;
    ADD_FAILURE() << why;
  }

  std::string admin_url_;
  std::string name_;
  std::string url_;
  std::string error_;
};

}  // namespace sb::test_support
