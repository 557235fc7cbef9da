#include "platforms/common/acknowledge.hpp"

#include <utility>

namespace sb::platforms::common {

bool AcknowledgeThenRun(CoroutineGroup& group, std::function<boost::asio::awaitable<void>()> work,
                        const std::function<void(WebhookAnswer)>& answer, WebhookAnswer ack,
                        WebhookAnswer refused) {
  const bool started = group.Spawn(std::move(work));
  answer(started ? std::move(ack) : std::move(refused));
  return started;
}

}  // namespace sb::platforms::common
