// Several instances on one database: each enabled bot's platform connection runs on the one
// instance holding its lease (domain::BotLeaseRepository). This sits between the services and the
// runtime: a bot is started here only once its lease is taken, and stopped as soon as the lease
// is lost, released or lapses by the local clock. A thread renews the held leases and takes free
// or lapsed ones, so a dead instance's bots move to a live one within the lease's time to live.
//   BotOwnership owned(runtime, storage.bots(), storage.bot_leases(), {.instance_id = id});
//   runtime.SetSendFence(&owned);
//   owned.Start();   // takes what it can, then keeps at it
//   core.bots().AttachRuntime(&owned);
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "domain/bot.hpp"
#include "domain/bot_lease.hpp"
#include "domain/bot_runtime.hpp"

namespace sb::runtime {

struct OwnershipOptions {
  std::string instance_id;
  std::string instance_url;  // where this instance takes forwarded webhook calls; may be empty
  // A lease lapses this long after its last renewal. Renewed every ttl/3; other instances look
  // for lapsed leases every `scan_interval`, so a dead owner's bots move within ttl + scan.
  std::chrono::milliseconds ttl{9000};
  std::chrono::milliseconds scan_interval{2000};
  // Hands a webhook call for a bot another instance runs to that instance (its lease's
  // owner_url). Null, or no URL: such a call is answered 503 (the platform retries, and the load
  // balancer may send it to the owner).
  std::function<void(const domain::BotLease& holder, domain::PlatformCall call,
                     std::function<void(util::Result<domain::PlatformAnswer>)> answer)>
      forward;
  // The header a forwarded call carries: never forwarded a second time.
  std::string forwarded_header;
};

// Thread-safe.
class BotOwnership final : public domain::BotRuntime, public domain::SendFence {
 public:
  BotOwnership(domain::BotRuntime& runtime, domain::BotRepository& bots,
               domain::BotLeaseRepository& leases, OwnershipOptions options);
  ~BotOwnership() override;  // Stop()
  BotOwnership(const BotOwnership&) = delete;
  BotOwnership& operator=(const BotOwnership&) = delete;

  // Takes the leases of enabled bots that are free (starting them), then keeps renewing and
  // scanning on a thread of its own. Blocking for the first round.
  void Start();
  // Ends the thread: leases are no longer renewed or taken. Blocking; idempotent.
  void Stop();
  // Gives every held lease up so another instance takes the bots at once: after Stop, once the
  // runtime's bots have stopped (so two instances never run one bot). Blocking.
  void ReleaseAll();

  // The bots whose leases this instance holds, sorted by uuid.
  std::vector<util::BotId> Owned() const;
  // Grows whenever Owned() changes (for caching what is rendered from it).
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  const std::string& instance_id() const { return options_.instance_id; }

  // domain::SendFence: the lease is held and, by the local monotonic clock, has not lapsed.
  bool MaySend(const util::BotId& bot) const override;

  // domain::BotRuntime, for the services: a bot this instance does not own is started only if its
  // lease can be taken; a change to a bot another instance owns reaches it by its next scan.
  std::optional<domain::RuntimeStatus> Status(const util::BotId& id) override;
  void Apply(const domain::Bot& bot) override;
  void Remove(const util::BotId& id) override;
  void CommitLogs() override { runtime_.CommitLogs(); }
  void Send(const util::BotId& id, const domain::OutgoingMessage& message,
            std::function<void(util::Result<domain::SendReceipt>)> done) override;
  void HandlePlatformCall(
      const util::BotId& id, domain::PlatformCall call,
      std::function<void(util::Result<domain::PlatformAnswer>)> answer) override;
  util::Result<domain::PlatformSocketHandlers> OpenPlatformSocket(
      const util::BotId& id, domain::PlatformCall call,
      std::shared_ptr<domain::PlatformSocket> socket) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Held {
    domain::Bot bot;  // as last applied to the runtime
    std::int64_t generation = 0;
    Clock::time_point taken_at;
    Clock::time_point valid_until;  // local: the last renewal's start + ttl - margin
  };

  void Loop();
  void RenewHeld();
  void Scan();
  enum class Take { kTaken, kHeldElsewhere, kFailed };
  // Takes `bot`'s lease and starts it.
  Take TryTake(const domain::Bot& bot);
  // Stops `id` here and gives its lease up (when `release`), logging `why`.
  void Drop(const util::BotId& id, const char* why, bool release);
  util::Error NotOwnedHere(const util::BotId& id) const;

  domain::BotRuntime& runtime_;
  domain::BotRepository& bots_;
  domain::BotLeaseRepository& leases_;
  const OwnershipOptions options_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, Held> held_;  // by bot uuid; guarded by mu_
  bool stopping_ = false;             // guarded by mu_
  std::atomic<std::uint64_t> generation_{1};
  std::thread thread_;
};

}  // namespace sb::runtime
