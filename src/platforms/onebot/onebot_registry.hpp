// Which OneBot connection is which: the live sockets, the slot each account holds per role (a
// newer connection for the same account and role replaces the older), where sends go, which
// account last heard each chat, and which connections have missed their heartbeats.
//   std::shared_ptr<Conn> older = registry.Claim(conn, self_id);  // close `older` if any
//   std::shared_ptr<Conn> out = registry.RouteFor(outgoing);       // null: nobody to send through
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "domain/message.hpp"
#include "domain/received_message.hpp"
#include "platforms/onebot/onebot_connection.hpp"
#include "util/clock.hpp"

namespace sb::platforms::onebot {

// Missing heartbeats for this many intervals (plus a little slack) means a dead link.
inline constexpr int kHeartbeatsMissed = 2;
inline constexpr util::Duration kHeartbeatSlack = std::chrono::seconds(1);

// Not thread-safe: the adapter's mutex guards it.
class ConnectionRegistry {
 public:
  void AddLive(std::shared_ptr<Conn> conn);

  // `conn` (of account `self_id`) takes the slot of its account and role, and becomes where sends
  // go when it takes actions. Returns the older connection it replaced there, if any.
  std::shared_ptr<Conn> Claim(const std::shared_ptr<Conn>& conn, const std::string& self_id);

  // Forgets an ended connection; a sender still registered takes over the sends. Returns whether
  // any connection that takes actions is left.
  bool Remove(const std::shared_ptr<Conn>& conn);

  // At stop: the slots let go of their connections (which then end by themselves).
  void ReleaseSlots() { slots_.clear(); }

  // Replies leave through the account that received the chat (a bot may serve several QQ
  // accounts, and only members of a group can write to it): remembers `self_id` for the chat of
  // `message`. Returns the account id the host currently knows the bot by.
  std::string RememberRoute(const domain::ReceivedMessage& message, const std::string& self_id);

  // The connection a message to `message`'s target goes through: the account that last heard
  // from that chat when it is connected, else the newest connection that takes actions.
  std::shared_ptr<Conn> RouteFor(const domain::OutgoingMessage& message) const;

  // The live connections, not already being dropped, that said a heartbeat interval and have
  // sent nothing for kHeartbeatsMissed of them (plus kHeartbeatSlack) before `now_ms`.
  std::vector<std::shared_ptr<Conn>> Silent(std::int64_t now_ms) const;

 private:
  std::map<std::uint64_t, std::shared_ptr<Conn>> live_;  // by serial
  std::map<std::string, std::shared_ptr<Conn>> slots_;   // "<self>/api|event"
  std::weak_ptr<Conn> primary_;                          // where sends go
  std::unordered_map<std::string, std::string> routes_;  // chat -> self id
  std::string shown_account_;                            // the account id last given to OnConnected
};

}  // namespace sb::platforms::onebot
