// trigger.message-aggregation: messages of one chat session that arrive within `delay` of each
// other are merged into one before they go through the pipeline, as LangBot does for people who
// type in bursts. Each new message restarts the wait; at most kMaxMerged are merged.
//   aggregator.Add(key, std::move(message), 1500ms, [](ReceivedMessage merged) { Enqueue(...); });
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "platforms/platform_adapter.hpp"

namespace sb::runtime {

class MessageAggregator : public std::enable_shared_from_this<MessageAggregator> {
 public:
  static constexpr int kMaxMerged = 10;
  using Deliver = std::function<void(platforms::ReceivedMessage merged)>;

  static std::shared_ptr<MessageAggregator> Make(boost::asio::any_io_executor executor);

  // Thread-safe. `deliver` of the session's first held message is the one called, once, on an
  // I/O thread, with the merged message: the chains joined by a line break, the id and sender of
  // the newest message (so a reply quotes the last one).
  void Add(const std::string& key, platforms::ReceivedMessage message,
           std::chrono::milliseconds delay, Deliver deliver);

  // Drops whatever is held; nothing is delivered afterwards (shutdown).
  void Close();

  std::size_t Held() const;

 private:
  explicit MessageAggregator(boost::asio::any_io_executor executor);
  struct Pending;
  void Fire(const std::string& key, std::uint64_t generation);

  boost::asio::any_io_executor executor_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Pending>> pending_;
  std::uint64_t generation_ = 0;
  bool closed_ = false;
};

}  // namespace sb::runtime
