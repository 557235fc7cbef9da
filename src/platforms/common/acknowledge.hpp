// "Acknowledge now, work later" for webhook platforms with an answer deadline (Slack 3 s, LINE
// "fast", Lark 3 s, WeCom 5 s): the call is answered at once and the work (fetching media,
// handing messages to the host) runs afterwards in the adapter's coroutine group, so Stop still
// waits for it and cancels it.
//   AcknowledgeThenRun(*group_, [self, event] { return self->Deliver(event); }, std::move(answer),
//                      {200, "application/json", "{}"}, {503, "application/json", stopping});
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>

#include "platforms/coroutine_group.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::common {

// Starts `work` in `group` and answers `ack`; when the group takes no more work (the adapter is
// stopping) answers `refused` and drops `work`. Returns whether the work was started.
bool AcknowledgeThenRun(CoroutineGroup& group, std::function<boost::asio::awaitable<void>()> work,
                        const std::function<void(WebhookAnswer)>& answer, WebhookAnswer ack,
                        WebhookAnswer refused);

}  // namespace sb::platforms::common
