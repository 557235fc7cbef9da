#include "mcp/session_manager.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "util/utf8.hpp"

namespace sb::mcp {

namespace asio = boost::asio;
using util::ErrorCode;

// One supervised server. `server`, `strand` and `wake` are fixed; the fields below them are
// touched on the strand only, the published ones under the manager's mutex.
struct McpSessionManager::Slot {
  Slot(domain::McpServer s, asio::any_io_executor io)
      : server(std::move(s)), strand(asio::make_strand(io)), wake(strand) {}

  const domain::McpServer server;
  const asio::strand<asio::any_io_executor> strand;
  asio::steady_timer wake;  // the supervisor sleeps on it; cancelled to wake it early

  // On the strand.
  std::shared_ptr<Session> session;  // while connected
  int in_flight = 0;                 // tool calls running on `session`
  bool stopping = false;
  bool poked = false;    // a wake-up that came while the supervisor was not sleeping
  bool suspect = false;  // a call failed in a way a dead session fails: ping now

  // Published (the manager's mutex).
  domain::McpRuntimeInfo info{"connecting", "", {}, 0};
  bool connected = false;
  std::vector<domain::ToolSpec> offers;                       // as offered to models
  std::map<std::string, std::string, std::less<>> mcp_names;  // offered name -> MCP name
};

namespace {

using Slot = McpSessionManager::Slot;

// On the strand: wakes the supervisor now, or at its next sleep.
void Poke(Slot& slot) {
  slot.poked = true;
  slot.wake.cancel();
}

// On the strand: true when poked rather than timed out.
asio::awaitable<bool> Sleep(Slot& slot, std::chrono::milliseconds d) {
  if (!slot.poked) {
    slot.wake.expires_after(d);
    boost::system::error_code ec;
    co_await slot.wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  const bool poked = slot.poked;
  slot.poked = false;
  co_return poked;
}

// Cut at `max` bytes without splitting a UTF-8 sequence.
void CutText(std::string& text, std::size_t max) {
  if (text.size() <= max) return;
  text.resize(util::Utf8CutPoint(text, max));
  text += fmt::format("\n[cut: the result was longer than {} bytes]", max);
}

// Failures that mean the session may be gone rather than the one call failed.
bool SuggestsDeadSession(const util::Error& e) {
  return e.code == ErrorCode::kUnavailable || e.code == ErrorCode::kUpstreamUnreachable;
}

}  // namespace

std::string OfferedToolName(std::string_view mcp_name) {
  std::string out;
  for (char c : mcp_name.substr(0, 64)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    out.push_back(ok ? c : '_');
  }
  if (out.empty()) out = "_";
  return out;
}

McpSessionManager::McpSessionManager(domain::McpServerRepository& repo, SessionMaker make,
                                     asio::any_io_executor io, SessionManagerOptions options)
    : repo_(repo), make_(std::move(make)), io_(std::move(io)), options_(options) {}

// The supervisors run on the I/O threads and touch the manager until they end: wait for them
// (a stopped supervisor ends at once, or after its server's Close; Stop was usually called
// already and this returns immediately).
McpSessionManager::~McpSessionManager() { Stop(std::chrono::seconds(10)); }

void McpSessionManager::Start() { Reload(); }

void McpSessionManager::Reload() {
  std::lock_guard reload(reload_mutex_);
  auto list = repo_.List();
  if (!list) {
    spdlog::error("MCP servers: cannot read them: {}", list.error().message);
    return;
  }
  std::vector<std::shared_ptr<Slot>> started;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    std::map<std::string, const domain::McpServer*> wanted;
    for (const auto& s : *list) {
      if (s.enable) wanted[s.name] = &s;
    }
    for (auto it = slots_.begin(); it != slots_.end();) {
      auto want = wanted.find(it->first);
      const domain::McpServer& running = it->second->server;
      const bool same = want != wanted.end() && want->second->uuid == running.uuid &&
                        want->second->mode == running.mode &&
                        want->second->extra_args == running.extra_args;
      if (same) {
        wanted.erase(want);
        ++it;
        continue;
      }
      StopSlot(it->second);
      it = slots_.erase(it);
    }
    for (const auto& [name, server] : wanted) {
      auto slot = std::make_shared<Slot>(*server, io_);
      slots_[name] = slot;
      ++supervisors_;
      started.push_back(std::move(slot));
    }
  }
  for (auto& slot : started) {
    asio::co_spawn(slot->strand, Supervise(slot), asio::detached);
  }
}

void McpSessionManager::StopSlot(const std::shared_ptr<Slot>& slot) {
  asio::post(slot->strand, [slot] {
    slot->stopping = true;
    Poke(*slot);
  });
}

void McpSessionManager::Stop(std::chrono::milliseconds grace) {
  std::unique_lock lock(mutex_);
  if (!stopped_) {
    stopped_ = true;
    for (auto& [name, slot] : slots_) StopSlot(slot);
    slots_.clear();
  }
  all_finished_.wait_for(lock, grace, [this] { return supervisors_ == 0; });
  if (supervisors_ > 0) {
    spdlog::warn("MCP: {} session(s) still closing at shutdown", supervisors_);
  }
}

void McpSessionManager::Finished() {
  std::lock_guard lock(mutex_);
  --supervisors_;
  all_finished_.notify_all();
}

// The life of one server: connect, watch, and on any failure close and start again after a
// doubling backoff, until stopped.
asio::awaitable<void> McpSessionManager::Supervise(std::shared_ptr<Slot> slot) {
  // Counted out when the frame goes: at its end, or when the I/O context destroys it suspended
  // at shutdown (then the manager, destroyed after the context, does not wait for it).
  struct Finish {
    McpSessionManager* manager;
    ~Finish() { manager->Finished(); }
  } finish{this};
  const std::string& name = slot->server.name;
  auto backoff = options_.first_backoff;
  while (!slot->stopping) {
    util::Error failure{ErrorCode::kInternal, "the session ended"};
    auto made = make_(slot->server, slot->strand);
    if (!made) {
      failure = made.error();
    } else {
      std::shared_ptr<Session> session(std::move(*made));
      auto connected = co_await Connect(*slot, *session);
      if (connected) {
        slot->session = session;
        backoff = options_.first_backoff;
        spdlog::info("MCP server '{}' connected (protocol {})", name, session->protocol_version());
        failure = co_await Watch(*slot, *session);
        slot->session.reset();
        {
          std::lock_guard lock(mutex_);
          slot->connected = false;
          slot->offers.clear();
          slot->mcp_names.clear();
        }
        // Calls still running end by their own deadline; the session stays open for them.
        if (slot->in_flight > 0) {
          co_await Sleep(*slot, options_.tool_timeout + std::chrono::seconds(1));
        }
      } else {
        failure = connected.error();
      }
      co_await session->Close();
    }
    if (slot->stopping) break;
    {
      std::lock_guard lock(mutex_);
      slot->info.status = "error";
      slot->info.error_message = failure.message;
      slot->info.tools.clear();
      ++slot->info.restarts;
    }
    spdlog::warn("MCP server '{}': {}; starting it again in {} ms", name, failure.message,
                 backoff.count());
    co_await Sleep(*slot, backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
    if (!slot->stopping) {
      std::lock_guard lock(mutex_);
      slot->info.status = "connecting";
    }
  }
}

asio::awaitable<util::Result<void>> McpSessionManager::Connect(Slot& slot, Session& session) {
  auto init = co_await session.Initialize();
  if (!init) co_return tl::make_unexpected(init.error());
  auto tools = co_await session.ListTools();
  if (!tools) co_return tl::make_unexpected(tools.error());
  PublishTools(slot, *tools);
  co_return util::Ok();
}

// While connected: pings every ping_interval, follows tool-list changes, and returns why the
// session is over (stopped, the server gone, a failed ping or listing).
asio::awaitable<util::Error> McpSessionManager::Watch(Slot& slot, Session& session) {
  for (;;) {
    const bool poked = co_await Sleep(slot, options_.ping_interval);
    if (slot.stopping) co_return util::Error{ErrorCode::kCancelled, "stopped"};
    if (!session.alive()) co_return util::Error{ErrorCode::kUnavailable, "the server went away"};
    if (session.tools_changed()) {
      auto tools = co_await session.ListTools();
      if (!tools) {
        co_return util::Error{tools.error().code,
                              "listing its changed tools failed: " + tools.error().message};
      }
      PublishTools(slot, *tools);
    }
    if (!poked || slot.suspect) {
      slot.suspect = false;
      auto pong = co_await session.Ping();
      if (!pong) {
        co_return util::Error{pong.error().code, "ping failed: " + pong.error().message};
      }
    }
  }
}

void McpSessionManager::PublishTools(Slot& slot, const std::vector<Tool>& tools) {
  std::vector<domain::ToolSpec> offers;
  std::map<std::string, std::string, std::less<>> mcp_names;
  std::vector<domain::McpToolInfo> infos;
  for (const auto& t : tools) {
    std::string offered = OfferedToolName(t.name);
    if (!mcp_names.emplace(offered, t.name).second) {
      spdlog::warn(
          "MCP server '{}': tool '{}' is not offered: its name reads as '{}' to models, "
          "like another of its tools",
          slot.server.name, t.name, offered);
      continue;
    }
    offers.push_back({std::move(offered), t.description, t.input_schema});
    infos.push_back({t.name, t.description});
  }
  std::lock_guard lock(mutex_);
  slot.connected = true;
  slot.offers = std::move(offers);
  slot.mcp_names = std::move(mcp_names);
  slot.info.status = "connected";
  slot.info.error_message.clear();
  slot.info.tools = std::move(infos);
}

std::optional<domain::McpRuntimeInfo> McpSessionManager::Info(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = slots_.find(name);
  if (it == slots_.end()) return std::nullopt;
  return it->second->info;
}

std::vector<McpSessionManager::ServerStats> McpSessionManager::Stats() {
  std::lock_guard lock(mutex_);
  std::vector<ServerStats> out;
  for (const auto& [name, slot] : slots_) {
    out.push_back({name, slot->info.status, slot->info.restarts});
  }
  return out;
}

std::vector<domain::ToolSpec> McpSessionManager::Tools(const domain::McpBinding& binding) {
  std::lock_guard lock(mutex_);
  std::vector<domain::ToolSpec> out;
  std::map<std::string_view, bool> seen;
  for (const auto& [name, slot] : slots_) {
    if (!slot->connected || !binding.Includes(name)) continue;
    for (const auto& spec : slot->offers) {
      if (seen.emplace(spec.name, true).second) out.push_back(spec);
    }
  }
  return out;
}

void McpSessionManager::CallTool(const domain::McpBinding& binding, const std::string& name,
                                 const std::string& arguments,
                                 std::function<void(util::Result<std::string>)> done) {
  std::shared_ptr<Slot> slot;
  std::string mcp_name;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [server, s] : slots_) {
      if (!s->connected || !binding.Includes(server)) continue;
      if (auto it = s->mcp_names.find(name); it != s->mcp_names.end()) {
        slot = s;
        mcp_name = it->second;
        break;
      }
    }
  }
  if (!slot) {
    return done(util::Fail(ErrorCode::kNotFound,
                           fmt::format("no connected MCP server offers the tool '{}'", name)));
  }
  util::JsonObject args;
  if (arguments.find_first_not_of(" \t\r\n") != std::string::npos) {
    auto parsed = util::ParseJson(arguments);
    if (!parsed || !parsed->is_object()) {
      return done(util::Fail(ErrorCode::kInvalidArgument,
                             fmt::format("the arguments of '{}' are not a JSON object", name)));
    }
    args = std::move(parsed->as_object());
  }
  asio::co_spawn(slot->strand, CallOn(slot, std::move(mcp_name), std::move(args)),
                 [done = std::move(done)](std::exception_ptr ep, util::Result<std::string> r) {
                   if (ep) r = util::Fail(ErrorCode::kInternal, "the MCP tool call failed");
                   done(std::move(r));
                 });
}

asio::awaitable<util::Result<std::string>> McpSessionManager::CallOn(std::shared_ptr<Slot> slot,
                                                                     std::string name,
                                                                     util::JsonObject arguments) {
  const std::string& server = slot->server.name;
  std::shared_ptr<Session> session = slot->session;
  if (!session || slot->stopping) {
    co_return util::Fail(ErrorCode::kUnavailable,
                         fmt::format("MCP server '{}' is reconnecting", server));
  }
  ++slot->in_flight;
  auto r = co_await session->CallTool(name, std::move(arguments), options_.tool_timeout);
  --slot->in_flight;
  if (!r && (SuggestsDeadSession(r.error()) || !session->alive())) {
    slot->suspect = true;
    Poke(*slot);
  } else if (slot->in_flight == 0 && slot->session != session) {
    Poke(*slot);  // the supervisor waits for the last call before closing
  }
  if (!r) {
    co_return util::Fail(r.error().code,
                         fmt::format("MCP server '{}': {}", server, r.error().message));
  }
  std::string text = std::move(r->text);
  CutText(text, options_.max_result_bytes);
  if (r->is_error) text = "the tool reported an error: " + text;
  co_return text;
}

}  // namespace sb::mcp
