// KOOK's rule for gateway events (websocket doc, signal 0): handle them in `sn` order, hold back
// an event that comes early until the ones before it arrive, and drop an `sn` already handled.
// The last sn handled goes out with every PING (the server then resends what is missing) and in
// the resume URL. Pure; the adapter passes the clock's time in.
//   SnOrder order;
//   for (util::Json& d : order.Accept(frame.sn, std::move(frame.d), clock.Now())) Deliver(d);
//   co_await conn->Write(EncodePing(order.last()));
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "util/clock.hpp"
#include "util/json.hpp"

namespace sb::platforms::kook {

// Not thread-safe: one per gateway session, used by its read loop.
class SnOrder {
 public:
  // A gap older than `max_gap_wait`, or more than `max_held` events held back, is given up on:
  // the held events are then handled from the oldest on (the missing ones are lost).
  explicit SnOrder(std::size_t max_held = 512,
                   util::Duration max_gap_wait = std::chrono::seconds(40));

  // The events that are now in order, `d` among them unless it came early or was seen before.
  std::vector<util::Json> Accept(std::int64_t sn, util::Json d, util::TimePoint now);
  // The held events released because their gap is older than max_gap_wait (call it now and then).
  std::vector<util::Json> Expire(util::TimePoint now);

  // The last sn handled; 0 when none (KOOK numbers a session's events from 1).
  std::int64_t last() const { return last_; }
  std::size_t held() const { return held_.size(); }
  // A new session (RECONNECT, a resume refused): forgets the sn and everything held.
  void Reset();

 private:
  std::vector<util::Json> Drain();
  std::vector<util::Json> GiveUpGap();

  const std::size_t max_held_;
  const util::Duration max_gap_wait_;
  std::int64_t last_ = 0;
  std::map<std::int64_t, util::Json> held_;  // sn -> event, all above last_ + 1
  util::TimePoint gap_since_{};              // when the oldest held event arrived
};

}  // namespace sb::platforms::kook
