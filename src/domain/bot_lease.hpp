// Several instances on one database: each enabled bot's platform connection is run by the one
// instance holding its lease. A lease lapses by time (the database's clock) unless renewed, and
// its generation grows with every change of owner.
//   auto gen = leases.Acquire(bot, instance_id, url, 10s);  // nullopt: another instance holds it
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "util/ids.hpp"

namespace sb::domain {

struct BotLease {
  util::BotId bot;
  std::string owner;
  std::string owner_url;  // where the owner takes forwarded webhook calls; may be empty
  std::int64_t generation = 0;
};

// Whether this instance may still send for a bot: its lease has not lapsed by the local clock.
// Asked before every message to a platform, so an owner that was paused past its lease sends
// nothing once it wakes. Thread-safe, never blocks.
class SendFence {
 public:
  virtual ~SendFence() = default;
  virtual bool MaySend(const util::BotId& bot) const = 0;
};

// Implementations are thread-safe and may block: call them off the I/O threads.
class BotLeaseRepository {
 public:
  virtual ~BotLeaseRepository() = default;
  // Takes `bot`'s lease for `owner` until `ttl` from now when nobody holds it or its holder let it
  // lapse. The new generation, or nullopt when another owner holds it.
  virtual util::Result<std::optional<std::int64_t>> Acquire(const util::BotId& bot,
                                                            const std::string& owner,
                                                            const std::string& owner_url,
                                                            std::chrono::milliseconds ttl) = 0;
  // Extends, to `ttl` from now, every lease `owner` holds that has not lapsed, and returns them. A
  // lapsed lease is not extended even if nobody took it: its owner must acquire it again.
  virtual util::Result<std::vector<BotLease>> Renew(const std::string& owner,
                                                    std::chrono::milliseconds ttl) = 0;
  // Gives the lease up (another instance may take it at once). No error when not held.
  virtual util::Result<void> Release(const util::BotId& bot, const std::string& owner) = 0;
  // The holder of `bot`'s lease, unless it lapsed.
  virtual util::Result<std::optional<BotLease>> Holder(const util::BotId& bot) = 0;
};

}  // namespace sb::domain
