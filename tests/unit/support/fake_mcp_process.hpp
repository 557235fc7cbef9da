// tests/fakes/fake_mcp.py in its HTTP modes (Streamable HTTP at /mcp, HTTP+SSE at /sse) as a
// child of the test, on a free port; terminated and reaped when the object goes. Needs the
// SB_FAKE_MCP definition (the fake's path) of the mcp_test target.
//   FakeMcpProcess fake({"--sse-answers"});  ASSERT_GT(fake.port(), 0);  fake.url();
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

namespace sb::test {

class FakeMcpProcess {
 public:
  explicit FakeMcpProcess(std::vector<std::string> extra) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      std::vector<char*> argv{const_cast<char*>("python3"), const_cast<char*>(SB_FAKE_MCP),
                              const_cast<char*>("--port"), const_cast<char*>("0")};
      for (auto& e : extra) argv.push_back(e.data());
      argv.push_back(nullptr);
      execvp("python3", argv.data());
      _exit(127);
    }
    close(out[1]);
    stdout_ = fdopen(out[0], "r");
    char line[256];
    while (stdout_ && fgets(line, sizeof line, stdout_)) {
      if (std::sscanf(line, "FAKE_MCP_PORT=%d", &port_) == 1) break;
    }
  }
  ~FakeMcpProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_) fclose(stdout_);
  }
  FakeMcpProcess(const FakeMcpProcess&) = delete;
  FakeMcpProcess& operator=(const FakeMcpProcess&) = delete;

  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string url() const { return base() + "/mcp"; }  // Streamable HTTP
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  FILE* stdout_ = nullptr;
};

}  // namespace sb::test
