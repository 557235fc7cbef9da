// Where the customer-service adapter keeps its kf/sync_msg cursors: per bot and per service
// account, in one store the composition root makes once and hands to every wecomcs adapter it
// builds, so a bot restarted by a config change or a disable/enable pulls on from where it was
// instead of re-reading the last 3 days. In memory: a process restart starts without cursors
// (the adapter then takes messages older than its start as history).
//   auto cursors = std::make_shared<KfCursorStore>();
//   deps.adapters["wecomcs"] = [cursors](AdapterContext c) { return MakeWeComCsAdapter(...,
//   cursors); };
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace sb::platforms::wecom {

// Thread-safe.
class KfCursorStore {
 public:
  // Empty when the bot has never pulled for that account.
  std::string Get(const std::string& bot_uuid, const std::string& open_kfid) const;
  void Set(const std::string& bot_uuid, const std::string& open_kfid, std::string cursor);
  std::size_t size() const;

 private:
  // A bot seldom has more than a few accounts; a store this full is being fed garbage.
  static constexpr std::size_t kMaxEntries = 100'000;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::string> cursors_;  // guarded by mu_
};

}  // namespace sb::platforms::wecom
