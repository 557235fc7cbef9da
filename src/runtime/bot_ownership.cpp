#include "runtime/bot_ownership.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>

namespace sb::runtime {

namespace {

using util::ErrorCode;

// Local validity ends this much before the lease's own end in the database: the margin absorbs
// the time between the renewal's start (where local validity is counted from) and the database
// reading its clock, and clocks that run at slightly different rates.
std::chrono::milliseconds MarginOf(std::chrono::milliseconds ttl) {
  return std::min(std::chrono::milliseconds(1000), ttl / 5);
}
// The loop wakes at least this often to stop bots whose leases lapsed by the local clock.
constexpr std::chrono::milliseconds kTick{250};

}  // namespace

BotOwnership::BotOwnership(domain::BotRuntime& runtime, domain::BotRepository& bots,
                           domain::BotLeaseRepository& leases, OwnershipOptions options)
    : runtime_(runtime), bots_(bots), leases_(leases), options_(std::move(options)) {}

BotOwnership::~BotOwnership() { Stop(); }

void BotOwnership::Start() {
  Scan();
  thread_ = std::thread([this] { Loop(); });
}

void BotOwnership::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BotOwnership::ReleaseAll() {
  std::map<std::string, Held> held;
  {
    std::lock_guard lock(mu_);
    held.swap(held_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  for (const auto& [uuid, h] : held) {
    if (auto r = leases_.Release(h.bot.uuid, options_.instance_id); !r) {
      spdlog::warn("cannot release the lease of bot {}: {}", uuid, r.error().message);
    }
  }
}

std::vector<util::BotId> BotOwnership::Owned() const {
  std::vector<util::BotId> out;
  std::lock_guard lock(mu_);
  for (const auto& [uuid, h] : held_) out.push_back(h.bot.uuid);
  return out;
}

bool BotOwnership::MaySend(const util::BotId& bot) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(bot.str());
  return it != held_.end() && Clock::now() < it->second.valid_until;
}

void BotOwnership::Loop() {
  const auto renew_every = options_.ttl / 3;
  auto next_renew = Clock::now() + renew_every;
  auto next_scan = Clock::now() + options_.scan_interval;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto until = std::min({next_renew, next_scan, Clock::now() + kTick});
    wake_.wait_until(lock, until, [&] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    if (Clock::now() >= next_renew) {
      RenewHeld();
      next_renew = Clock::now() + renew_every;
    }
    // A lease that lapsed by the local clock (the database was unreachable, or this process was
    // paused): its bot stops now, before another instance may take it.
    std::vector<util::BotId> lapsed;
    {
      std::lock_guard held_lock(mu_);
      for (const auto& [uuid, h] : held_) {
        if (Clock::now() >= h.valid_until) lapsed.push_back(h.bot.uuid);
      }
    }
    for (const auto& id : lapsed) Drop(id, "its lease lapsed", /*release=*/false);
    if (Clock::now() >= next_scan) {
      Scan();
      next_scan = Clock::now() + options_.scan_interval;
    }
    lock.lock();
  }
}

void BotOwnership::RenewHeld() {
  const auto started = Clock::now();
  auto renewed = leases_.Renew(options_.instance_id, options_.ttl);
  if (!renewed) {
    // The bots keep running until their local validity ends; the loop stops them then.
    spdlog::warn("cannot renew bot leases: {}", renewed.error().message);
    return;
  }
  std::map<std::string, std::int64_t> generations;
  for (const auto& lease : *renewed) generations[lease.bot.str()] = lease.generation;
  std::vector<util::BotId> lost;
  {
    std::lock_guard lock(mu_);
    for (auto& [uuid, h] : held_) {
      if (h.taken_at >= started) continue;  // taken after the renewal read the table
      auto it = generations.find(uuid);
      if (it != generations.end() && it->second == h.generation) {
        h.valid_until = started + options_.ttl - MarginOf(options_.ttl);
      } else {
        lost.push_back(h.bot.uuid);
      }
    }
  }
  for (const auto& id : lost) Drop(id, "its lease was lost", /*release=*/false);
}

void BotOwnership::Scan() {
  auto all = bots_.List();
  if (!all) {
    spdlog::warn("cannot list bots to balance their leases: {}", all.error().message);
    return;
  }
  std::set<std::string> present;
  for (const auto& bot : *all) {
    present.insert(bot.uuid.str());
    bool owned = false;
    bool changed = false;
    {
      std::lock_guard lock(mu_);
      auto it = held_.find(bot.uuid.str());
      owned = it != held_.end();
      changed = owned && it->second.bot.updated_at != bot.updated_at;
    }
    if (!owned) {
      // The database failing once fails the rest too: try again at the next scan.
      if (bot.enable && TryTake(bot) == Take::kFailed) return;
    } else if (!bot.enable) {
      Drop(bot.uuid, "it was disabled", /*release=*/true);
    } else if (changed) {
      // Edited through another instance: apply the new settings here, where it runs.
      {
        std::lock_guard lock(mu_);
        auto it = held_.find(bot.uuid.str());
        if (it != held_.end()) it->second.bot = bot;
      }
      runtime_.Apply(bot);
    }
  }
  std::vector<util::BotId> deleted;
  {
    std::lock_guard lock(mu_);
    for (const auto& [uuid, h] : held_) {
      if (!present.contains(uuid)) deleted.push_back(h.bot.uuid);
    }
  }
  for (const auto& id : deleted) {
    Drop(id, "it was deleted", /*release=*/true);
    runtime_.Remove(id);
  }
}

BotOwnership::Take BotOwnership::TryTake(const domain::Bot& bot) {
  const auto started = Clock::now();
  auto generation =
      leases_.Acquire(bot.uuid, options_.instance_id, options_.instance_url, options_.ttl);
  if (!generation) {
    spdlog::warn("cannot take the lease of bot {}: {}", bot.uuid.str(), generation.error().message);
    return Take::kFailed;
  }
  if (!*generation) return Take::kHeldElsewhere;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Take::kHeldElsewhere;
    generation_.fetch_add(1, std::memory_order_acq_rel);
    held_[bot.uuid.str()] =
        Held{bot, **generation, started, started + options_.ttl - MarginOf(options_.ttl)};
  }
  spdlog::info("instance {} runs bot {} (lease generation {})", options_.instance_id,
               bot.uuid.str(), **generation);
  runtime_.Apply(bot);
  return Take::kTaken;
}

void BotOwnership::Drop(const util::BotId& id, const char* why, bool release) {
  std::optional<domain::Bot> bot;
  {
    std::lock_guard lock(mu_);
    auto it = held_.find(id.str());
    if (it == held_.end()) return;
    bot = std::move(it->second.bot);
    held_.erase(it);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  spdlog::info("instance {} stops running bot {}: {}", options_.instance_id, id.str(), why);
  bot->enable = false;
  runtime_.Apply(*bot);
  if (!release) return;
  if (auto r = leases_.Release(id, options_.instance_id); !r) {
    spdlog::warn("cannot release the lease of bot {}: {}", id.str(), r.error().message);
  }
}

util::Error BotOwnership::NotOwnedHere(const util::BotId& id) const {
  util::Error e{ErrorCode::kUnavailable,
                fmt::format("bot {} is run by another instance", id.str())};
  e.retry_after_seconds = 1;
  return e;
}

std::optional<domain::RuntimeStatus> BotOwnership::Status(const util::BotId& id) {
  return runtime_.Status(id);
}

void BotOwnership::Apply(const domain::Bot& bot) {
  bool owned = false;
  {
    std::lock_guard lock(mu_);
    auto it = held_.find(bot.uuid.str());
    owned = it != held_.end();
    if (owned && bot.enable) it->second.bot = bot;
  }
  if (!bot.enable) {
    if (owned) {
      Drop(bot.uuid, "it was disabled", /*release=*/true);
    } else {
      runtime_.Apply(bot);
    }
    return;
  }
  if (owned) {
    runtime_.Apply(bot);
  } else {
    TryTake(bot);  // held elsewhere: that instance applies the change at its next scan
  }
}

void BotOwnership::Remove(const util::BotId& id) {
  Drop(id, "it was deleted", /*release=*/true);
  runtime_.Remove(id);
}

void BotOwnership::Send(const util::BotId& id, const domain::OutgoingMessage& message,
                        std::function<void(util::Result<domain::SendReceipt>)> done) {
  if (!MaySend(id)) return done(tl::make_unexpected(NotOwnedHere(id)));
  runtime_.Send(id, message, std::move(done));
}

void BotOwnership::HandlePlatformCall(
    const util::BotId& id, domain::PlatformCall call,
    std::function<void(util::Result<domain::PlatformAnswer>)> answer) {
  if (MaySend(id)) return runtime_.HandlePlatformCall(id, std::move(call), std::move(answer));
  // Run by another instance: its webhook traffic goes there (called on the blocking pool, so the
  // holder may be read here).
  if (options_.forward && call.Header(options_.forwarded_header).empty()) {
    auto holder = leases_.Holder(id);
    if (holder && *holder && (*holder)->owner != options_.instance_id &&
        !(*holder)->owner_url.empty()) {
      return options_.forward(**holder, std::move(call), std::move(answer));
    }
  }
  answer(tl::make_unexpected(NotOwnedHere(id)));
}

util::Result<domain::PlatformSocketHandlers> BotOwnership::OpenPlatformSocket(
    const util::BotId& id, domain::PlatformCall call,
    std::shared_ptr<domain::PlatformSocket> socket) {
  if (!MaySend(id)) return tl::make_unexpected(NotOwnedHere(id));
  return runtime_.OpenPlatformSocket(id, std::move(call), std::move(socket));
}

}  // namespace sb::runtime
