// A Telegram reply streamed by editing one message: the first update sends the text so far
// (plain, as sendMessage with the reply's quoting), later updates editMessageText it, and the
// final reply edits it into the reply's first text message (MarkdownV2 when `markdown_card`),
// followed by the reply's other messages. Withdrawn replies are deleted. Internal to
// platforms/telegram.
//   auto stream = MakeEditStream(group, run_call, send_whole, message_target, reply_to, options);
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <string>

#include "platforms/coroutine_group.hpp"
#include "platforms/platform_adapter.hpp"
#include "platforms/telegram/telegram_codec.hpp"

namespace sb::platforms::telegram {

// Runs one Bot API call as the adapter's sends do (a MarkdownV2 text that does not parse is
// repeated with its plain_params); the call's result, or the error.
using RunCall =
    std::function<boost::asio::awaitable<util::Result<util::Json>>(const OutboundCall& call)>;
// Sends a message as the adapter's Send does.
using SendWhole = std::function<void(domain::OutgoingMessage message, std::string reply_to,
                                     std::function<void(util::Result<domain::SendReceipt>)>)>;

// `target` names the chat (its chain is ignored). The calls run in `group`.
std::shared_ptr<ReplyStream> MakeEditStream(std::shared_ptr<CoroutineGroup> group, RunCall run,
                                            SendWhole send_whole, domain::OutgoingMessage target,
                                            std::string reply_to, EncodeOptions options);

}  // namespace sb::platforms::telegram
