// WebSocket listeners: an accept loop on host:port, each connection's upgrade request read under
// a size and time limit and judged by the owner's acceptor, then a Session (beast_websocket_
// session.hpp). A ListenerState shared by the loop, the upgrades and the sessions counts who is
// still alive, so Stop can report when the last one is gone.
#include <spdlog/spdlog.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/beast_websocket_session.hpp"
#include "net/proxy.hpp"
#include "net/websocket.hpp"

namespace sb::net {

std::string_view WebSocketUpgrade::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return {};
}

namespace ws_detail {
namespace {

namespace http = beast::http;
using tcp = asio::ip::tcp;
using PlainSession = Session<beast::tcp_stream>;

std::string EndpointText(const tcp::endpoint& endpoint) {
  const auto address = endpoint.address();
  const std::string host =
      address.is_v6() && address.to_v6().is_v4_mapped()
          ? asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string()
          : address.to_string();
  return HostPort(host, std::to_string(endpoint.port()));
}

// Shared by the listener handle, its accept loop, the upgrades in progress and the sessions.
class ListenerState : public std::enable_shared_from_this<ListenerState> {
 public:
  ListenerState(asio::any_io_executor executor, WebSocketListenOptions options,
                WebSocketAcceptor accept, WebSocketOpened opened)
      : executor(std::move(executor)),
        acceptor_strand(asio::make_strand(this->executor)),
        acceptor(acceptor_strand),
        options(std::move(options)),
        accept(std::move(accept)),
        opened(std::move(opened)) {}

  // A member is the accept loop, an upgrade in progress or a live session.
  void Join() {
    std::lock_guard lock(mutex_);
    ++members_;
  }
  void Leave() {
    std::shared_ptr<ListenerState> keep;  // declared first: released last, after the callbacks
    std::vector<std::function<void()>> fire;
    {
      std::lock_guard lock(mutex_);
      --members_;
      if (stopping_ && members_ == 0) {
        fire.swap(stopped_);
        keep = std::move(self_while_stopping_);
      }
    }
    for (auto& f : fire) f();
  }

  // An upgrade may become a session unless max_connections are open or the listener stops.
  bool ReserveSession() {
    std::lock_guard lock(mutex_);
    if (stopping_ || sessions_reserved_ >= options.max_connections) return false;
    ++sessions_reserved_;
    return true;
  }
  void ReleaseSession() {
    std::lock_guard lock(mutex_);
    --sessions_reserved_;
  }
  bool stopping() {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  // Returns false when the listener stopped meanwhile: the caller then sends it away.
  bool Register(std::uint64_t id, const std::shared_ptr<SessionBase>& session) {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    sessions_[id] = session;
    return true;
  }
  void Unregister(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    sessions_.erase(id);
  }

  // Upgrades in progress, closed by Stop rather than left to their read timeout.
  void Track(std::uint64_t id, std::weak_ptr<beast::tcp_stream> stream, asio::any_io_executor ex) {
    std::lock_guard lock(mutex_);
    upgrading_[id] = {std::move(stream), std::move(ex)};
  }
  void Untrack(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    upgrading_.erase(id);
  }

  std::uint64_t NextId() {
    std::lock_guard lock(mutex_);
    return ++next_id_;
  }

  void Stop(std::function<void()> stopped) {
    std::vector<std::shared_ptr<SessionBase>> live;
    std::vector<std::pair<std::weak_ptr<beast::tcp_stream>, asio::any_io_executor>> upgrading;
    bool fire_now = false;
    {
      std::lock_guard lock(mutex_);
      if (stopped) stopped_.push_back(std::move(stopped));
      if (stopping_) {
        // A later Stop: its callback runs now if everything is already gone.
        fire_now = members_ == 0;
      } else {
        stopping_ = true;
        // Sessions and upgrades hold the state weakly; while they close, it must outlive a handle
        // the adapter dropped at once, or nobody would be left to report the end. (The accept
        // loop holds it strongly already, so it alone is no reason.)
        if (!sessions_.empty() || !upgrading_.empty()) self_while_stopping_ = shared_from_this();
        for (auto& [id, weak] : sessions_) {
          if (auto s = weak.lock()) live.push_back(std::move(s));
        }
        for (auto& [id, entry] : upgrading_) upgrading.push_back(entry);
      }
    }
    if (fire_now) {
      std::vector<std::function<void()>> fire;
      {
        std::lock_guard lock(mutex_);
        fire.swap(stopped_);
      }
      for (auto& f : fire) f();
      return;
    }
    asio::post(acceptor_strand, [self = shared_from_this()] {
      error_code ignored;
      self->acceptor.close(ignored);
    });
    for (auto& [weak, ex] : upgrading) {
      asio::post(ex, [weak] {
        if (auto stream = weak.lock()) {
          error_code ignored;
          stream->socket().close(ignored);
        }
      });
    }
    for (auto& session : live) session->GoAway();
  }

  const asio::any_io_executor executor;
  const asio::strand<asio::any_io_executor> acceptor_strand;
  tcp::acceptor acceptor;  // on acceptor_strand
  const WebSocketListenOptions options;
  const WebSocketAcceptor accept;
  const WebSocketOpened opened;

 private:
  std::mutex mutex_;
  // All below guarded by mutex_.
  std::size_t members_ = 0;
  std::size_t sessions_reserved_ = 0;
  bool stopping_ = false;
  std::vector<std::function<void()>> stopped_;
  std::shared_ptr<ListenerState> self_while_stopping_;  // set by Stop until the last member leaves
  std::uint64_t next_id_ = 0;
  std::unordered_map<std::uint64_t, std::weak_ptr<SessionBase>> sessions_;
  std::unordered_map<std::uint64_t,
                     std::pair<std::weak_ptr<beast::tcp_stream>, asio::any_io_executor>>
      upgrading_;
};

// A plain-text answer that ends the connection (a refused or malformed upgrade).
asio::awaitable<void> Refuse(beast::tcp_stream& stream, int status, std::string body) {
  if (status < 200 || status > 599) status = 500;  // an acceptor's mistake, not a crash
  http::response<http::string_body> res{static_cast<http::status>(status), 11};
  res.set(http::field::server, "Switchboard");
  res.set(http::field::content_type, "text/plain; charset=utf-8");
  res.set(http::field::connection, "close");
  if (status == 426) {
    res.set(http::field::upgrade, "websocket");
    res.set(http::field::sec_websocket_version, "13");
  }
  res.body() = std::move(body);
  res.prepare_payload();
  stream.expires_after(std::chrono::seconds(5));
  co_await http::async_write(stream, res, kTuple);
  error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream.socket().close(ignored);
}

// Reads and judges one upgrade request; on the connection's strand.
asio::awaitable<void> Upgrade(std::shared_ptr<ListenerState> state, tcp::socket socket) {
  const std::uint64_t id = state->NextId();
  error_code endpoint_ec;
  const auto endpoint = socket.remote_endpoint(endpoint_ec);
  const std::string remote = endpoint_ec ? "unknown" : EndpointText(endpoint);
  auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
  state->Track(id, stream, stream->get_executor());
  struct Untrack {
    ~Untrack() {
      state->Untrack(id);
      state->Leave();
    }
    ListenerState* state;
    std::uint64_t id;
  } untrack{state.get(), id};
  const auto& options = state->options;

  beast::flat_buffer buffer(options.max_header_bytes + 1024);
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
  parser.body_limit(options.max_header_bytes);
  stream->expires_after(options.limits.handshake_timeout);
  auto [read_ec, n] = co_await http::async_read(*stream, buffer, parser, kTuple);
  if (read_ec == http::error::header_limit || read_ec == http::error::body_limit) {
    co_await Refuse(*stream, 431, "upgrade request too large\n");
    co_return;
  }
  if (read_ec) {
    if (parser.got_some() && read_ec != beast::error::timeout && !state->stopping() &&
        read_ec != http::error::end_of_stream) {
      co_await Refuse(*stream, 400, "malformed request\n");
    }
    co_return;
  }
  auto request = parser.release();
  if (!websocket::is_upgrade(request)) {
    const bool get = request.method() == http::verb::get;
    co_await Refuse(*stream, get ? 426 : 400,
                    get ? "this endpoint takes WebSocket connections only\n"
                        : "bad request: WebSocket upgrade expected\n");
    co_return;
  }
  if (!state->ReserveSession()) {
    co_await Refuse(*stream, 503, "too many connections\n");
    co_return;
  }
  bool reserved = true;
  struct Reservation {
    ~Reservation() {
      if (*held) state->ReleaseSession();
    }
    ListenerState* state;
    bool* held;
  } reservation{state.get(), &reserved};

  WebSocketUpgrade upgrade;
  upgrade.target = std::string(request.target());
  upgrade.remote_address = remote;
  for (const auto& field : request) {
    upgrade.headers.emplace_back(AsciiLower(field.name_string()), std::string(field.value()));
  }
  WebSocketVerdict verdict;
  try {
    verdict = state->accept(upgrade);
  } catch (const std::exception& e) {
    spdlog::error("websocket listener: the acceptor threw: {}", e.what());
    verdict = {500, "internal error\n"};
  }
  if (verdict.status != 0) {
    co_await Refuse(*stream, verdict.status, std::move(verdict.body));
    co_return;
  }

  // From here the session is a member of its own: it leaves (and frees its place) when it ends.
  state->Join();
  reserved = false;
  auto on_end = [weak = std::weak_ptr<ListenerState>(state), id] {
    if (auto st = weak.lock()) {
      st->Unregister(id);
      st->ReleaseSession();
      st->Leave();
    }
  };
  auto session = std::make_shared<PlainSession>(options.limits, remote, std::move(on_end),
                                                stream->release_socket());
  session->Configure(beast::role_type::server);
  // The upgrade request is answered from the parsed message; a client waits for the 101 before
  // sending frames, so nothing useful is left in `buffer`.
  auto accept_ec = co_await session->Accept(request);
  if (accept_ec) {
    session->Finish(accept_ec, "");
    co_return;
  }
  if (!state->Register(id, session)) {
    session->GoAway();
    co_return;
  }
  session->Start();
  try {
    state->opened(std::make_shared<ConnectionHandle>(session), std::move(upgrade));
  } catch (const std::exception& e) {
    spdlog::error("websocket listener: the opened callback threw: {}", e.what());
  }
}

asio::awaitable<void> AcceptLoop(std::shared_ptr<ListenerState> state) {
  struct Leave {
    ~Leave() { state->Leave(); }
    ListenerState* state;
  } leave{state.get()};
  for (;;) {
    auto strand = asio::make_strand(state->executor);
    auto [ec, socket] = co_await state->acceptor.async_accept(strand, kTuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || state->stopping() || !state->acceptor.is_open()) {
        co_return;
      }
      // Out of descriptors and the like: wait a little rather than spin.
      spdlog::warn("websocket listener: accept failed: {}", ec.message());
      asio::steady_timer pause(state->acceptor_strand, std::chrono::milliseconds(100));
      co_await pause.async_wait(kTuple);
      continue;
    }
    state->Join();
    asio::co_spawn(strand, Upgrade(state, std::move(socket)), LogException{"upgrade"});
  }
}

class BeastWebSocketListener final : public WebSocketListener {
 public:
  BeastWebSocketListener(std::shared_ptr<ListenerState> state, std::uint16_t port)
      : state_(std::move(state)), port_(port) {}
  ~BeastWebSocketListener() override { state_->Stop(nullptr); }

  std::uint16_t port() const override { return port_; }
  void Stop(std::function<void()> stopped) override { state_->Stop(std::move(stopped)); }

 private:
  const std::shared_ptr<ListenerState> state_;
  const std::uint16_t port_;
};

}  // namespace

util::Result<std::shared_ptr<WebSocketListener>> ListenWebSocket(asio::any_io_executor executor,
                                                                 WebSocketListenOptions options,
                                                                 WebSocketAcceptor accept,
                                                                 WebSocketOpened opened) {
  const std::string where = HostPort(options.host, std::to_string(options.port));
  auto fail = [&](const error_code& ec) {
    return util::Fail(util::ErrorCode::kUnavailable,
                      "cannot listen on " + where + ": " + ec.message());
  };
  error_code ec;
  const auto address = asio::ip::make_address(options.host, ec);
  if (ec) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "cannot listen on " + where + ": not an IP address");
  }
  auto state = std::make_shared<ListenerState>(std::move(executor), std::move(options),
                                               std::move(accept), std::move(opened));
  const tcp::endpoint endpoint(address, state->options.port);
  auto& acceptor = state->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (ec) return fail(ec);
  acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  acceptor.bind(endpoint, ec);
  if (ec) return fail(ec);
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail(ec);
  const std::uint16_t port = acceptor.local_endpoint(ec).port();
  state->Join();
  asio::co_spawn(state->acceptor_strand, AcceptLoop(state), LogException{"accept loop"});
  return std::make_shared<BeastWebSocketListener>(state, port);
}

}  // namespace ws_detail
}  // namespace sb::net
