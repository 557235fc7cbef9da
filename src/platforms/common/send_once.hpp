// A Send's `done`, wrapped so that it runs exactly once: with the result, or with kCancelled ("the
// bot stopped before sending") when every holder lets go first (a coroutine cancelled at stop).
//   auto once = common::MakeSendOnce(std::move(done));
//   group->Spawn([once]() -> awaitable<void> { ...; (*once)(receipt); });
#pragma once

#include <functional>
#include <memory>

#include "domain/bot_runtime.hpp"
#include "util/call_once.hpp"
#include "util/error.hpp"

namespace sb::platforms::common {

using SendOnce = util::CallOnce<util::Result<domain::SendReceipt>>;

inline std::shared_ptr<SendOnce> MakeSendOnce(
    std::function<void(util::Result<domain::SendReceipt>)> done) {
  return std::make_shared<SendOnce>(std::move(done), [] {
    return util::Fail(util::ErrorCode::kCancelled, "the bot stopped before sending");
  });
}

}  // namespace sb::platforms::common
