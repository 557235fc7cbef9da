// The OneBot adapter's core, shared by its two source files: onebot_adapter.cpp (lifecycle,
// listening, connections and their frames) and onebot_actions.cpp (sends, quoted-message
// lookups, answers and deadlines). Not for use outside src/platforms/onebot.
#pragma once

#include <algorithm>
#include <atomic>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "domain/message_text.hpp"
#include "net/websocket.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/onebot/onebot_codec.hpp"
#include "platforms/onebot/onebot_connection.hpp"
#include "platforms/onebot/onebot_pending.hpp"
#include "platforms/onebot/onebot_registry.hpp"
#include "platforms/onebot/onebot_upgrade.hpp"

namespace sb::platforms::onebot::detail {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using domain::LogLevel;
using util::ErrorCode;

// An action the implementation has not answered within this long fails with kUpstreamTimeout
// (aiocqhttp waits 60 s; a reply that late is of no use to a chat).
inline constexpr util::Duration kActionTimeout = 30s;
// The get_msg for a quoted message holds its message back until answered: a short wait, after
// which the message goes on without the quoted text.
inline constexpr util::Duration kLookupTimeout = 5s;
// The name a forward message's node shows for the bot (LangBot shows "User").
inline constexpr std::string_view kForwardNickname = "Bot";
// Deadlines, heartbeats and the flood window are checked on this tick.
inline constexpr util::Duration kTick = 500ms;
// A frame above the soft limit is skipped (logged, counted); above the hard one the transport
// closes the connection (1009). NapCat's own maximum is 50 MB; events carry URLs, not bytes.
inline constexpr std::size_t kSoftFrameLimit = 1 << 20;
inline constexpr std::size_t kHardFrameLimit = 4 << 20;
// More bad frames than this within one window closes the connection (1008).
inline constexpr int kMaxBadFrames = 50;
inline constexpr util::Duration kBadFrameWindow = 10s;
inline constexpr int kLoggedBadFrames = 5;  // per window; the rest are only counted
inline constexpr std::size_t kMaxConnections = 2048;

inline std::int64_t Millis(util::TimePoint t) { return util::ToUnixMillis(t); }

class Core : public std::enable_shared_from_this<Core> {
 public:
  explicit Core(AdapterContext context)
      : context_(std::move(context)),
        host_(*context_.host),
        clock_(*context_.clock),
        listen_host_(common::ConfigString(context_.config, "host", "0.0.0.0")),
        port_(common::ConfigInt(context_.config, "port", 2280)),
        token_(common::ConfigString(context_.config, "access-token")),
        group_(CoroutineGroup::Make(context_.executor)) {
    if (listen_host_.empty()) listen_host_ = "0.0.0.0";
    if (listen_host_ == "localhost") listen_host_ = "127.0.0.1";  // the listener takes addresses
  }

  void Start();

  void Stop(std::function<void()> stopped);

  void Abandon() { Stop(nullptr); }

  // Quoting is the pipeline's choice (a Quote element, from quote-origin), not the adapter's, so
  // `reply_to_message_id` is not used.
  void Send(domain::OutgoingMessage message, std::string /*reply_to_message_id*/, SendDone done);

 private:
  // send_private_msg / send_group_msg.
  void SendNormal(const domain::OutgoingMessage& message, std::shared_ptr<common::SendOnce> once);

  // The long-text strategy "forward". An implementation without the go-cqhttp forward actions
  // (the standard has none) refuses it: the reply then goes out as ordinary messages. Only a
  // refusal falls back; a forward left unanswered may have been posted, so it is not repeated.
  void SendForward(domain::OutgoingMessage message, std::shared_ptr<common::SendOnce> once);

  // ---- listening ------------------------------------------------------------------------

  void Listen();

  // A refused upgrade: logged without the token (CheckUpgrade's text never holds one).
  void Refused(const net::WebSocketUpgrade& up, const UpgradeCheck& check);

  void Opened(std::shared_ptr<net::WebSocketConnection> ws, net::WebSocketUpgrade up);

  // ---- one connection -------------------------------------------------------------------

  asio::awaitable<void> Serve(std::shared_ptr<Conn> conn);

  void HandleFrame(const std::shared_ptr<Conn>& conn, const std::string& data, bool binary);

  // A reply segment carries only the quoted message's id: its text comes from get_msg (as
  // LangBot does), asked on the connection the message came by. The message waits for the answer
  // (kLookupTimeout at most) and goes on without the text when there is none.
  void LookUpQuoteThenDeliver(const std::shared_ptr<Conn>& conn, domain::ReceivedMessage message);

  void FailLookup(const std::string& echo);

  void BadFrame(Conn& conn, const std::string& why);

  void AdoptSelfId(const std::shared_ptr<Conn>& conn, const std::string& self_id);

  // Returns the account id the host currently knows the bot by.
  std::string RememberRoute(const domain::ReceivedMessage& message, const std::string& self_id);

  // The connection holds the slot of its account and role: an older one there is closed.
  void Register(const std::shared_ptr<Conn>& conn);

  // Closes a connection from any thread; its read loop then ends it.
  void Drop(Conn& conn, int code, std::string reason);

  asio::awaitable<void> Ended(std::shared_ptr<Conn> conn);

  // ---- answers and deadlines ------------------------------------------------------------

  void Answered(ActionResponse response);

  void FailPending(const std::string& echo, util::Error error);

  void ScheduleTick();

  void Tick();

  const AdapterContext context_;
  AdapterHost& host_;
  const util::Clock& clock_;
  std::string listen_host_;
  const std::int64_t port_;
  const std::string token_;
  const std::shared_ptr<CoroutineGroup> group_;
  std::atomic<std::uint64_t> serial_{0};
  std::atomic<bool> had_trouble_{false};
  util::TimerHandle retry_timer_;
  util::TimerHandle tick_timer_;

  std::mutex mu_;
  bool stopping_ = false;                             // guarded by mu_
  std::shared_ptr<net::WebSocketListener> listener_;  // guarded by mu_
  common::ReconnectBackoff backoff_;                  // guarded by mu_
  ConnectionRegistry registry_;                       // guarded by mu_
  PendingActions pending_;                            // guarded by mu_
  std::uint64_t refused_ = 0;                         // guarded by mu_
  std::uint64_t bad_frames_total_ = 0;                // guarded by mu_
};

}  // namespace sb::platforms::onebot::detail
