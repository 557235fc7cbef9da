// When a received message may go through its pipeline: at most `max_in_flight` runs at once over
// the whole process, one at a time per chat session (so replies keep their order and memory is
// not raced), and at most `max_queued` waiting; beyond that a message is refused, and the caller
// tells the sender. Sessions take turns, so one chatty group cannot starve the others.
//   if (!scheduler.Submit(key, [](SessionScheduler::Finished finished) { ...; finished(); }))
//     SendBusyNotice();
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace sb::pipeline {

class SessionScheduler {
 public:
  // Must be called exactly once when the job's work is over, from any thread.
  using Finished = std::function<void()>;
  using Job = std::function<void(Finished)>;
  // Runs a job that may start now. Must not block; typically posts it to a thread pool.
  using Launch = std::function<void(std::function<void()>)>;

  SessionScheduler(std::size_t max_in_flight, std::size_t max_queued, Launch launch);

  // Thread-safe. False when the queue is full: the job was not taken.
  bool Submit(const std::string& session_key, Job job);

  // The running job of `session_key` gives back its global slot while it waits (a rate-limit
  // wait, a forced delay) but keeps the session's turn. Idempotent; `finished` still ends it.
  void Yield(const std::string& session_key);

  std::size_t InFlight() const;
  std::size_t Queued() const;

 private:
  struct Session {
    std::deque<Job> waiting;
    bool running = false;
    bool holds_slot = false;  // the running job counts against max_in_flight
    bool ready = false;       // listed in ready_
  };
  struct Start {
    std::string key;
    Job job;
  };

  void OnFinished(const std::string& key);
  std::deque<Start> TakeStartableLocked();
  void StartAll(std::deque<Start> starts);

  const std::size_t max_in_flight_;
  const std::size_t max_queued_;
  Launch launch_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Session> sessions_;
  std::deque<std::string> ready_;  // sessions with a waiting job and none running, in turn
  std::size_t in_flight_ = 0;
  std::size_t queued_ = 0;
};

}  // namespace sb::pipeline
