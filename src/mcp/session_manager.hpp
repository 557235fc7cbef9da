// The running side of MCP: one live session per enabled server, supervised. A session that fails
// to start, stops answering pings or whose server exits is closed and started again with a
// doubling backoff, and shown as such (`runtime_info`: status, error, restarts). The tools of
// connected servers are offered to models (domain::McpTools) and their calls routed to the
// server's session with a deadline and a size cap on the result.
//   McpSessionManager mcp(repo, make_session, io.get_executor(), options);
//   mcp.Start();  ...  auto tools = mcp.Tools(binding);  ...  mcp.Stop(3s);
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "domain/mcp.hpp"
#include "mcp/session.hpp"

namespace sb::mcp {

// Makes the session of a server, its calls to run on `executor` (the server's strand).
using SessionMaker = std::function<util::Result<std::unique_ptr<Session>>(
    const domain::McpServer& server, boost::asio::any_io_executor executor)>;

struct SessionManagerOptions {
  std::chrono::milliseconds tool_timeout{60'000};  // one tool call, end to end
  std::size_t max_result_bytes = 64 * 1024;        // tool result text handed to a model
  std::chrono::milliseconds first_backoff{1'000};  // before the first restart; doubles
  std::chrono::milliseconds max_backoff{60'000};
  std::chrono::milliseconds ping_interval{30'000};  // a connected server that stops answering
};

// Thread-safe. Every reference must outlive the manager; Stop before the I/O context stops (the
// destructor stops too, waiting for the sessions' supervisors while the I/O threads still run).
class McpSessionManager final : public domain::McpRuntimeView, public domain::McpTools {
 public:
  McpSessionManager(domain::McpServerRepository& repo, SessionMaker make,
                    boost::asio::any_io_executor io, SessionManagerOptions options);
  ~McpSessionManager() override;

  // Starts a session for each enabled server. Blocking (reads the servers): call once, at start.
  void Start();
  // Ends every session (pending calls fail), waiting at most `grace` for them to close.
  void Stop(std::chrono::milliseconds grace);

  // McpRuntimeView
  std::optional<domain::McpRuntimeInfo> Info(const std::string& name) override;
  // Blocking (reads the servers): call from the blocking pool, as the services do.
  void Reload() override;

  // McpTools
  std::vector<domain::ToolSpec> Tools(const domain::McpBinding& binding) override;
  void CallTool(const domain::McpBinding& binding, const std::string& name,
                const std::string& arguments,
                std::function<void(util::Result<std::string>)> done) override;

  // For /metrics: each running server's status and restarts.
  struct ServerStats {
    std::string name;
    std::string status;
    int restarts = 0;
  };
  std::vector<ServerStats> Stats();

  struct Slot;  // one supervised server (session_manager.cpp)

 private:
  boost::asio::awaitable<void> Supervise(std::shared_ptr<Slot> slot);
  boost::asio::awaitable<util::Result<void>> Connect(Slot& slot, Session& session);
  boost::asio::awaitable<util::Error> Watch(Slot& slot, Session& session);
  boost::asio::awaitable<util::Result<std::string>> CallOn(std::shared_ptr<Slot> slot,
                                                           std::string name,
                                                           util::JsonObject arguments);
  void PublishTools(Slot& slot, const std::vector<Tool>& tools);
  void StartSlot(const domain::McpServer& server);
  void StopSlot(const std::shared_ptr<Slot>& slot);
  void Finished();  // a slot's supervisor ended

  domain::McpServerRepository& repo_;
  SessionMaker make_;
  boost::asio::any_io_executor io_;
  SessionManagerOptions options_;

  std::mutex reload_mutex_;                             // one Reload at a time
  std::mutex mutex_;                                    // slots_ and every slot's published state
  std::map<std::string, std::shared_ptr<Slot>> slots_;  // by server name: offers in name order
  bool stopped_ = false;
  int supervisors_ = 0;
  std::condition_variable all_finished_;
};

// A tool name as model APIs accept it (OpenAI: ^[A-Za-z0-9_-]{1,64}$): other characters become
// '_', cut to 64. MCP allows dots and longer names.
std::string OfferedToolName(std::string_view mcp_name);

}  // namespace sb::mcp
