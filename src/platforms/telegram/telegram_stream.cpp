#include "platforms/telegram/telegram_stream.hpp"

#include <boost/asio/this_coro.hpp>
#include <mutex>
#include <utility>

#include "platforms/common/json_fields.hpp"
#include "platforms/common/send_once.hpp"

namespace sb::platforms::telegram {
namespace {

namespace asio = boost::asio;
using util::ErrorCode;
using util::JsonObject;

// Telegram answers an edit to the same text with "message is not modified": nothing to do.
bool NotModified(const util::Error& error) {
  return error.message.find("message is not modified") != std::string::npos;
}

class EditStream final : public ReplyStream, public std::enable_shared_from_this<EditStream> {
 public:
  EditStream(std::shared_ptr<CoroutineGroup> group, RunCall run, SendWhole send_whole,
             domain::OutgoingMessage target, std::string reply_to, EncodeOptions options)
      : group_(std::move(group)),
        run_(std::move(run)),
        send_whole_(std::move(send_whole)),
        target_(std::move(target)),
        reply_to_(std::move(reply_to)),
        options_(std::move(options)) {
    target_.chain.clear();
  }

  void Update(std::string text_so_far, std::function<void(util::Result<void>)> done) override {
    auto self = shared_from_this();
    auto once = std::make_shared<std::function<void(util::Result<void>)>>(std::move(done));
    const bool started = group_->Spawn([self, text = std::move(text_so_far), once]() mutable {
      return self->Show(std::move(text), once);
    });
    if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

  void Finish(domain::OutgoingMessage message,
              std::function<void(util::Result<domain::SendReceipt>)> done) override {
    const std::string shown = ShownId();
    auto calls = EncodeOutgoing(message, reply_to_, options_);
    if (shown.empty() || !calls || calls->empty() || calls->front().method != "sendMessage") {
      // Nothing was shown, or the reply does not begin with text: it goes out whole (and a
      // message showing a draft is deleted).
      if (!shown.empty()) Abandon();
      return send_whole_(std::move(message), reply_to_, std::move(done));
    }
    auto once = common::MakeSendOnce(std::move(done));
    auto self = shared_from_this();
    auto shared = std::make_shared<std::vector<OutboundCall>>(std::move(*calls));
    const bool started = group_->Spawn([self, shared, once, shown]() -> asio::awaitable<void> {
      co_await asio::this_coro::throw_if_cancelled(false);
      std::vector<OutboundCall>& all = *shared;
      auto edited = co_await self->run_(self->AsEdit(all.front(), shown));
      if (!edited && !NotModified(edited.error())) {
        (*once)(tl::unexpected(edited.error()));
        co_return;
      }
      domain::SendReceipt receipt;
      receipt.message_id = shown;
      for (std::size_t i = 1; i < all.size(); ++i) {
        auto sent = co_await self->run_(all[i]);
        if (!sent) {
          (*once)(tl::unexpected(sent.error()));
          co_return;
        }
      }
      (*once)(receipt);
    });
    if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

  void Abandon() override {
    OutboundCall call;
    call.method = "deleteMessage";
    {
      std::lock_guard lock(mu_);
      if (shown_id_.empty()) return;
      call.params["chat_id"] = chat_id_;
      call.params["message_id"] = std::stoll(shown_id_);
    }
    auto self = shared_from_this();
    group_->Spawn([self, call = std::move(call)]() -> asio::awaitable<void> {
      co_await asio::this_coro::throw_if_cancelled(false);
      (void)co_await self->run_(call);
    });
  }

 private:
  std::string ShownId() {
    std::lock_guard lock(mu_);
    return shown_id_;
  }

  // A sendMessage of the final reply as an edit of the shown message.
  OutboundCall AsEdit(OutboundCall call, const std::string& shown) const {
    auto edit = [&](JsonObject& params) {
      params.erase("reply_parameters");
      params["message_id"] = std::stoll(shown);
    };
    call.method = "editMessageText";
    edit(call.params);
    if (call.plain_params) edit(*call.plain_params);
    return call;
  }

  asio::awaitable<void> Show(std::string text,
                             std::shared_ptr<std::function<void(util::Result<void>)>> done) {
    co_await asio::this_coro::throw_if_cancelled(false);
    // The text so far as the first message of a plain reply (quoting, chat id, the length cut).
    domain::OutgoingMessage draft = target_;
    domain::MessageElement plain;
    plain.type = domain::ElementType::kPlain;
    plain.text = std::move(text);
    draft.chain.push_back(std::move(plain));
    EncodeOptions plain_options;
    plain_options.markdown = false;  // half-written Markdown need not parse
    auto calls = EncodeOutgoing(draft, reply_to_, plain_options);
    if (!calls || calls->empty() || calls->front().method != "sendMessage") {
      (*done)(util::Ok());  // nothing showable yet (only spaces)
      co_return;
    }
    OutboundCall call = std::move(calls->front());
    const std::string shown_text = std::string(common::StringOr(call.params, "text"));
    std::string shown;
    {
      std::lock_guard lock(mu_);
      if (shown_text == last_text_) {
        (*done)(util::Ok());
        co_return;
      }
      shown = shown_id_;
      if (chat_id_.is_null()) chat_id_ = call.params["chat_id"];
    }
    if (!shown.empty()) call = AsEdit(std::move(call), shown);
    auto result = co_await run_(call);
    if (!result && !NotModified(result.error())) {
      (*done)(tl::unexpected(result.error()));
      co_return;
    }
    if (shown.empty()) {
      auto id = DecodeSentMessageId(*result);
      if (!id) {
        (*done)(tl::unexpected(id.error()));
        co_return;
      }
      std::lock_guard lock(mu_);
      shown_id_ = *id;
    }
    {
      std::lock_guard lock(mu_);
      last_text_ = shown_text;
    }
    (*done)(util::Ok());
  }

  const std::shared_ptr<CoroutineGroup> group_;
  const RunCall run_;
  const SendWhole send_whole_;
  domain::OutgoingMessage target_;
  const std::string reply_to_;
  const EncodeOptions options_;

  std::mutex mu_;
  std::string shown_id_;   // guarded by mu_; the message showing the reply, once sent
  std::string last_text_;  // guarded by mu_; what it shows
  util::Json chat_id_;     // guarded by mu_; as the Bot API calls name the chat
};

}  // namespace

std::shared_ptr<ReplyStream> MakeEditStream(std::shared_ptr<CoroutineGroup> group, RunCall run,
                                            SendWhole send_whole, domain::OutgoingMessage target,
                                            std::string reply_to, EncodeOptions options) {
  return std::make_shared<EditStream>(std::move(group), std::move(run), std::move(send_whole),
                                      std::move(target), std::move(reply_to), std::move(options));
}

}  // namespace sb::platforms::telegram
