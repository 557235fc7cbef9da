// Open connections per client, for api.max_connections_per_address: one client cannot hold
// thousands of idle connections. Thread-safe; shared with the sessions' completion handlers,
// which may outlive the server.
//   bool first_refusal = false;
//   if (!counts->TryAdd(util::ClientAddressKey(peer), first_refusal)) close();
//   ... counts->Remove(key);   // when that connection ends
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace sb::http {

class ConnectionCounts {
 public:
  // 0: no limit.
  explicit ConnectionCounts(std::size_t limit) : limit_(limit) {}

  // Counts a connection of `client`; false (nothing counted) when it already has the limit.
  // `first_refusal` tells whether this is the first refusal since it was under the limit (to
  // log a burst once).
  bool TryAdd(const std::string& client, bool& first_refusal);
  void Remove(const std::string& client);

 private:
  struct Entry {
    std::size_t open = 0;
    bool refused = false;  // a connection was refused since the count was last below the limit
  };
  const std::size_t limit_;
  std::mutex mu_;
  std::unordered_map<std::string, Entry> counts_;  // guarded by mu_
};

}  // namespace sb::http
