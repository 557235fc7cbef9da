// A rendered response body kept until the data behind it changes, so hot list routes answer on
// the I/O thread without touching the database. The owner of the data exposes a generation
// number that grows after every committed change; a body rendered from data read at generation
// g is served only while the current generation is still g.
//   auto body = cache.Get(service.generation(), variant);   // nullopt: render on the pool
//   const auto g = service.generation(); auto list = service.List(); cache.Put(g, variant, ...);
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace sb::http::api {

class RenderedCache {
 public:
  std::optional<std::string> Get(std::uint64_t generation, int variant) const {
    std::lock_guard lock(mu_);
    auto it = entries_.find(variant);
    if (it == entries_.end() || it->second.generation != generation) return std::nullopt;
    return it->second.body;
  }

  void Put(std::uint64_t generation, int variant, std::string body) {
    std::lock_guard lock(mu_);
    auto& e = entries_[variant];
    if (e.generation > generation && !e.body.empty()) return;  // a newer rendering won the race
    e.generation = generation;
    e.body = std::move(body);
  }

 private:
  struct Entry {
    std::uint64_t generation = 0;
    std::string body;
  };
  mutable std::mutex mu_;
  std::map<int, Entry> entries_;  // guarded by mu_
};

}  // namespace sb::http::api
