// A bounded memory of ids already handled, for platforms that redeliver (Slack retries, LINE
// redelivery, a replayed signed request): the first sighting of an id returns true, later ones
// false, and only the newest `capacity` ids are remembered.
//   RecentIds seen(10'000);
//   if (!seen.FirstSighting(event_id)) return Ack();  // already handled
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_set>

namespace sb::platforms::common {

// Thread-safe.
class RecentIds {
 public:
  explicit RecentIds(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // True the first time `id` is seen among the last `capacity` distinct ids. An empty id is
  // never remembered and always counts as a first sighting.
  bool FirstSighting(const std::string& id);
  // Forgets `id` (work for it failed before it was handed on, so a redelivery should be taken).
  void Forget(const std::string& id);
  std::size_t size() const;

 private:
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_set<std::string> ids_;  // guarded by mu_
  std::deque<std::string> order_;        // guarded by mu_; oldest first, may hold forgotten ids
};

}  // namespace sb::platforms::common
