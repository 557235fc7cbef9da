// The web page bot's visitors and their open sockets, with every bound the server keeps on
// strangers: sockets in all, per visitor and per address, the messages a visitor may send (a token
// bucket), how long a socket may sit idle, and what is remembered of each conversation (the last
// messages, shown again when the visitor reconnects). Pure: time is passed in; not thread-safe
// (the adapter holds it under its mutex).
//   VisitorTable table(Limits{});
//   auto id = table.Attach(visitor, address, socket, now);       // refused: why
//   if (table.Admit(visitor, *id, now) == Admission::kAccepted) ...;
//   for (auto& s : table.SocketsOf(visitor)) s->SendText(frame);
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "domain/platform_socket.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::web_page {

struct Limits {
  std::size_t max_sockets = 256;             // open sockets of the bot
  std::size_t max_sockets_per_visitor = 4;   // tabs of one browser
  std::size_t max_sockets_per_address = 32;  // visitors behind one IP address
  std::size_t max_visitors = 2000;           // remembered conversations (oldest idle go first)
  std::size_t history_messages = 50;         // remembered per visitor
  double burst = 5;                          // messages a visitor may send at once
  util::Duration refill = std::chrono::seconds(3);  // ... and then one per this
  int strikes_before_close = 10;  // refused messages in a row before the socket goes
  util::Duration idle = std::chrono::minutes(10);  // a socket with no frame this long is closed
};

enum class Admission { kAccepted, kRefused, kClose };

class VisitorTable {
 public:
  explicit VisitorTable(Limits limits) : limits_(limits) {}

  // Registers an open socket. kUnavailable when the bot has too many, kRateLimited when the
  // visitor or the address has too many.
  util::Result<std::uint64_t> Attach(const std::string& visitor, const std::string& address,
                                     std::shared_ptr<domain::PlatformSocket> socket,
                                     util::TimePoint now);
  void Detach(const std::string& visitor, std::uint64_t socket_id);

  // A message from the visitor on that socket: takes a token from the visitor's bucket.
  // kRefused when none is left, kClose after limits.strikes_before_close refusals in a row.
  // Any frame counts as activity for the idle bound (Touch).
  Admission Admit(const std::string& visitor, std::uint64_t socket_id, util::TimePoint now);
  void Touch(const std::string& visitor, std::uint64_t socket_id, util::TimePoint now);

  // Appends to the visitor's remembered conversation (a visitor not known is remembered now).
  void Record(const std::string& visitor, util::JsonObject entry, util::TimePoint now);
  std::vector<util::JsonObject> History(const std::string& visitor) const;
  bool Known(const std::string& visitor) const;

  std::vector<std::shared_ptr<domain::PlatformSocket>> SocketsOf(const std::string& visitor) const;
  // Sockets idle past the limit; they stay registered until their close is reported (Detach).
  std::vector<std::shared_ptr<domain::PlatformSocket>> Idle(util::TimePoint now) const;
  std::vector<std::shared_ptr<domain::PlatformSocket>> AllSockets() const;
  std::size_t SocketCount() const { return socket_count_; }
  std::size_t VisitorCount() const { return visitors_.size(); }

 private:
  struct Socket {
    std::shared_ptr<domain::PlatformSocket> socket;
    std::string address;
    util::TimePoint last_activity;
  };
  struct Visitor {
    std::map<std::uint64_t, Socket> sockets;
    std::list<util::JsonObject> history;
    double tokens = 0;
    util::TimePoint refilled_at;
    int strikes = 0;
    util::TimePoint last_seen;
  };

  Visitor& Remember(const std::string& visitor, util::TimePoint now);
  // Forgets the least recently seen visitors without sockets (but `keep`) while over
  // max_visitors.
  void Trim(std::string_view keep);

  const Limits limits_;
  std::unordered_map<std::string, Visitor> visitors_;
  std::unordered_map<std::string, std::size_t> per_address_;
  std::size_t socket_count_ = 0;
  std::uint64_t next_socket_id_ = 1;
};

}  // namespace sb::platforms::web_page
