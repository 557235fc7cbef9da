// The OneBot actions sent and not yet answered, matched by the `echo` the adapter put in each
// action frame: a send waiting for its message_id, or the get_login_info that names a connection's
// account. Each is answered once: by the implementation, its deadline, its connection's end or
// stop.
//   std::string echo = pending.Add(Pending{once, {}, conn->serial, "send_group_msg", deadline});
//   if (auto p = pending.Take(response.echo); p && p->done) (*p->done)(SendOutcome(*p, response));
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "domain/bot_runtime.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/onebot/onebot_codec.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::platforms::onebot {

struct Conn;

using SendDone = std::function<void(util::Result<domain::SendReceipt>)>;

struct Pending {
  // A send; null for the get_login_info of `login_for` and for a lookup.
  std::shared_ptr<common::SendOnce> done;
  std::weak_ptr<Conn> login_for;
  std::uint64_t conn_serial = 0;
  std::string action;
  util::TimePoint deadline;
  // A lookup (get_msg for a quoted message): called once with the answer, or with null when none
  // came (deadline, closed connection). Not called when the adapter stops.
  std::function<void(const ActionResponse*)> lookup = nullptr;
};

// Not thread-safe: the adapter's mutex guards it.
class PendingActions {
 public:
  // Keeps `pending` under a new echo ("sb:<n>"), which it returns for the action frame.
  std::string Add(Pending pending);
  // The action answered by `echo`, now forgotten; nullopt when late (timed out) or not ours.
  std::optional<Pending> Take(const std::string& echo);
  std::vector<Pending> TakeAll();
  // Those sent on the connection `conn_serial`, which has ended.
  std::vector<Pending> TakeFor(std::uint64_t conn_serial);
  // Those whose deadline is not after `now`.
  std::vector<Pending> TakeExpired(util::TimePoint now);

 private:
  std::unordered_map<std::string, Pending> pending_;  // by echo
  std::uint64_t echo_seq_ = 0;
};

// What a send's answer means: the receipt (with the message_id when given), or kUpstreamFailed
// with the implementation's reason and retcode.
util::Result<domain::SendReceipt> SendOutcome(const Pending& pending,
                                              const ActionResponse& response);

}  // namespace sb::platforms::onebot
