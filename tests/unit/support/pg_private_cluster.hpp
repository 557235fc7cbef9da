// A PostgreSQL cluster of one test's own, for tests that stop and start the server (the shared
// fixture cluster must stay up for the others). Started by tests/tools/pg_cluster.py in a
// temporary directory, stopped and deleted with the object.
//   test_support::PgPrivateCluster cluster;
//   ASSERT_TRUE(cluster.ok());
//   cluster.Halt();  ... cluster.Resume();
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "temp_dir.hpp"

namespace sb::test_support {

class PgPrivateCluster {
 public:
  // `script` and `python`: tests/tools/pg_cluster.py and the interpreter (compile definitions).
  PgPrivateCluster(std::string python, std::string script)
      : python_(std::move(python)), script_(std::move(script)), dir_("pgcluster") {
    if (!Run("start")) return;
    std::ifstream in(dir_.path() / "cluster" / "url");
    std::getline(in, url_);
    if (url_.empty()) ADD_FAILURE() << "pg_cluster.py start wrote no URL";
  }
  ~PgPrivateCluster() { Run("stop"); }
  PgPrivateCluster(const PgPrivateCluster&) = delete;
  PgPrivateCluster& operator=(const PgPrivateCluster&) = delete;

  bool ok() const { return !url_.empty(); }
  // postgresql://<user>@127.0.0.1:<port>/postgres (trust authentication).
  const std::string& url() const { return url_; }
  // The same URL carrying a password (which trust authentication ignores), for the tests that
  // check no message shows it.
  std::string UrlWithPassword(const std::string& password) const {
    std::string out = url_;
    out.insert(out.find('@'), ":" + password);
    return out;
  }

  // Stops the server (fast shutdown: sessions get 57P01), keeping its data and port.
  bool Halt() { return Run("halt"); }
  bool Resume() { return Run("resume"); }

 private:
  bool Run(const std::string& command) {
    const std::string line = python_ + " " + script_ + " " + command + " '" +
                             (dir_.path() / "cluster").string() + "' > /dev/null";
    const int status = std::system(line.c_str());
    if (status != 0) ADD_FAILURE() << line << " failed with status " << status;
    return status == 0;
  }

  std::string python_;
  std::string script_;
  TempDir dir_;
  std::string url_;
};

}  // namespace sb::test_support
