// A Lark reply streamed as a card: the first update replies with an interactive card (one
// markdown element, update_multi), later updates and the finish PATCH it with the whole text so
// far; what a card cannot hold (images, text beyond the card's size) follows as ordinary
// messages. Withdrawn replies are recalled. Internal to platforms/lark.
//   auto stream = MakeStream(self, group, api, type, chat_id, reply_to, send_whole);
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "platforms/coroutine_group.hpp"
#include "platforms/lark/lark_api.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::lark {

// Sends a message as the adapter's Send does (a reply to `reply_to` when it is not empty).
using SendWhole = std::function<void(domain::OutgoingMessage message, std::string reply_to,
                                     std::function<void(util::Result<domain::SendReceipt>)>)>;

// `owner` keeps `api` alive; the stream's calls run in `group` (so the adapter's Stop cancels
// them, and they then end with kCancelled).
std::shared_ptr<ReplyStream> MakeStream(std::shared_ptr<void> owner,
                                        std::shared_ptr<CoroutineGroup> group, LarkApi& api,
                                        domain::TargetType type, std::string chat_id,
                                        std::string reply_to, SendWhole send_whole);

}  // namespace sb::platforms::lark
