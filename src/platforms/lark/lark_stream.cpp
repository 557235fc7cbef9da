#include "platforms/lark/lark_stream.hpp"

#include <boost/asio/this_coro.hpp>
#include <mutex>
#include <utility>

#include "platforms/common/send_once.hpp"
#include "platforms/common/text_units.hpp"
#include "platforms/lark/lark_codec.hpp"
#include "util/ids.hpp"

namespace sb::platforms::lark {
namespace {

namespace asio = boost::asio;
using util::ErrorCode;

// Lark takes a card of at most 30 KB of JSON; the markdown text stays well below, in code points
// as the text limit is counted.
constexpr std::size_t kMaxCardCodePoints = 8'000;

// The head of `text` a card shows, and the rest (sent as messages after it).
std::pair<std::string, std::string> SplitForCard(const std::string& text) {
  auto pieces =
      common::SplitKeepingSeparator(text, kMaxCardCodePoints, common::TextUnit::kCodePoint);
  if (pieces.size() <= 1) return {text, ""};
  std::string rest;
  for (std::size_t i = 1; i < pieces.size(); ++i) rest += pieces[i];
  return {std::string(pieces[0]), std::move(rest)};
}

domain::MessageElement PlainElement(std::string text) {
  domain::MessageElement e;
  e.type = domain::ElementType::kPlain;
  e.text = std::move(text);
  return e;
}

class CardStream final : public ReplyStream, public std::enable_shared_from_this<CardStream> {
 public:
  CardStream(std::shared_ptr<void> owner, std::shared_ptr<CoroutineGroup> group, LarkApi& api,
             domain::TargetType type, std::string chat_id, std::string reply_to,
             SendWhole send_whole)
      : owner_(std::move(owner)),
        group_(std::move(group)),
        api_(api),
        type_(type),
        chat_id_(std::move(chat_id)),
        reply_to_(std::move(reply_to)),
        send_whole_(std::move(send_whole)) {}

  void Update(std::string text_so_far, std::function<void(util::Result<void>)> done) override {
    auto self = shared_from_this();
    auto once = std::make_shared<std::function<void(util::Result<void>)>>(std::move(done));
    const bool started = group_->Spawn([self, text = std::move(text_so_far), once]() {
      return self->Show(SplitForCard(text).first, once);
    });
    if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

  void Finish(domain::OutgoingMessage message,
              std::function<void(util::Result<domain::SendReceipt>)> done) override {
    const std::string card_id = CardId();
    std::string text = StreamCardText(message.chain);
    if (card_id.empty() || text.empty()) {
      // No card got through, or the reply has no text for it: the reply goes out whole, and a
      // card showing a draft is taken back.
      if (!card_id.empty()) Abandon();
      return send_whole_(std::move(message), reply_to_, std::move(done));
    }
    auto [head, rest] = SplitForCard(text);
    // What follows the card: the text beyond its size, then images (in their order).
    domain::OutgoingMessage after{message.target_type, message.target_id, {}};
    if (!rest.empty()) after.chain.push_back(PlainElement(std::move(rest)));
    for (auto& e : message.chain) {
      if (e.type == domain::ElementType::kImage) after.chain.push_back(std::move(e));
    }
    auto once = common::MakeSendOnce(std::move(done));
    auto self = shared_from_this();
    const bool started = group_->Spawn([self, head = std::move(head), after = std::move(after),
                                        once, card_id]() mutable -> asio::awaitable<void> {
      co_await asio::this_coro::throw_if_cancelled(false);
      auto shown = co_await self->api_.PatchCard(card_id, StreamCardContent(head));
      if (!shown) {
        (*once)(tl::unexpected(shown.error()));
        co_return;
      }
      if (after.chain.empty()) {
        domain::SendReceipt receipt;
        receipt.message_id = card_id;
        (*once)(receipt);
        co_return;
      }
      self->send_whole_(std::move(after), self->reply_to_,
                        [once, card_id](util::Result<domain::SendReceipt> sent) {
                          if (!sent) return (*once)(std::move(sent));
                          domain::SendReceipt receipt;
                          receipt.message_id = card_id;
                          (*once)(receipt);
                        });
    });
    if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

  void Abandon() override {
    const std::string card_id = CardId();
    if (card_id.empty()) return;
    auto self = shared_from_this();
    group_->Spawn([self, card_id]() -> asio::awaitable<void> {
      co_await asio::this_coro::throw_if_cancelled(false);
      (void)co_await self->api_.Recall(card_id);
    });
  }

 private:
  std::string CardId() {
    std::lock_guard lock(mu_);
    return card_id_;
  }

  asio::awaitable<void> Show(std::string text,
                             std::shared_ptr<std::function<void(util::Result<void>)>> done) {
    co_await asio::this_coro::throw_if_cancelled(false);
    const std::string content = StreamCardContent(text);
    const std::string card_id = CardId();
    if (!card_id.empty()) {
      (*done)(co_await api_.PatchCard(card_id, content));
      co_return;
    }
    auto id =
        co_await api_.Send(type_, chat_id_, reply_to_, "interactive", content, util::NewUuid());
    if (!id) {
      (*done)(tl::unexpected(id.error()));
      co_return;
    }
    if (id->empty() || !IsPlainId(*id)) {
      (*done)(util::Fail(ErrorCode::kUpstreamFailed, "Lark sent the card without a message_id"));
      co_return;
    }
    {
      std::lock_guard lock(mu_);
      card_id_ = *id;
    }
    (*done)(util::Ok());
  }

  const std::shared_ptr<void> owner_;
  const std::shared_ptr<CoroutineGroup> group_;
  LarkApi& api_;
  const domain::TargetType type_;
  const std::string chat_id_;
  const std::string reply_to_;
  const SendWhole send_whole_;

  std::mutex mu_;
  std::string card_id_;  // guarded by mu_; the card's message id once it was sent
};

}  // namespace

std::shared_ptr<ReplyStream> MakeStream(std::shared_ptr<void> owner,
                                        std::shared_ptr<CoroutineGroup> group, LarkApi& api,
                                        domain::TargetType type, std::string chat_id,
                                        std::string reply_to, SendWhole send_whole) {
  return std::make_shared<CardStream>(std::move(owner), std::move(group), api, type,
                                      std::move(chat_id), std::move(reply_to),
                                      std::move(send_whole));
}

}  // namespace sb::platforms::lark
