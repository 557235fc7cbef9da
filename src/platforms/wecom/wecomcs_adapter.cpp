#include "platforms/wecom/wecomcs_adapter.hpp"

#include <fmt/format.h>

#include <boost/asio/this_coro.hpp>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "platforms/common/core_adapter.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/wecom/wecom_base.hpp"
#include "platforms/wecom/wecom_callback.hpp"
#include "platforms/wecom/wecomcs_codec.hpp"

namespace sb::platforms::wecom {
namespace {

namespace asio = boost::asio;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::size_t kRememberedMessages = 10'000;
constexpr std::size_t kRememberedCustomers = 10'000;
// A pull stops after this many pages even if WeCom keeps saying has_more (a cursor that does not
// advance must not spin); the next callback continues from the cursor reached.
constexpr int kMaxPagesPerPull = 50;
// Without a cursor sync_msg starts at the oldest message of the last 3 days. Messages sent this
// long before the adapter started are taken as history and not answered again.
constexpr std::chrono::seconds kHistoryGrace{10};

class Core : public WeComBase, public std::enable_shared_from_this<Core> {
 public:
  Core(AdapterContext context, std::shared_ptr<KfCursorStore> cursors)
      : WeComBase(std::move(context), "WeCom customer service"),
        cursors_(std::move(cursors)),
        started_at_(context_.clock->Now()),
        seen_(kRememberedMessages) {}

  void Start() { StartWith(shared_from_this()); }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    (void)reply_to_message_id;
    auto once = common::MakeSendOnce(std::move(done));
    auto target = ParseKfTarget(message.target_id);
    if (!target) return (*once)(tl::unexpected(target.error()));
    if (target->open_kfid.empty()) target->open_kfid = AccountOf(target->external_userid);
    if (target->open_kfid.empty()) {
      return (*once)(util::Fail(ErrorCode::kInvalidArgument,
                                "this customer has not written since the bot started: address "
                                "them as <external_userid>|<open_kfid>"));
    }
    auto self = shared_from_this();
    auto text_body = [to = *target](std::string_view text) { return EncodeKfText(to, text); };
    auto media_body = [to = *target](std::string_view type, std::string_view media_id) {
      return EncodeKfMedia(to, type, media_id);
    };
    const bool started = !Stopping() && group_->Spawn([self, parts = PlanParts(message.chain),
                                                       text_body, media_body, once]() mutable {
      return self->SendParts(std::move(parts), "/kf/send_msg", text_body, media_body, once);
    });
    if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    const common::WeChatEndpoint* endpoint = Endpoint();
    if (endpoint == nullptr) {
      return answer({503, "text/plain; charset=utf-8", "the bot's WeCom settings are incomplete"});
    }
    OpenedCallback opened = OpenCallback(*endpoint, call, context_.clock->Now());
    if (opened.answer) {
      if (!opened.log.empty()) Log(LogLevel::kWarning, std::move(opened.log));
      return answer(std::move(*opened.answer));
    }
    auto nudge = DecodeKfNudge(opened.fields);
    if (!nudge) {
      // Other events of the app (a customer-service account changed ...) carry nothing to pull.
      Log(LogLevel::kDebug, "WeCom customer service: skipped a callback: " + nudge.error().message);
      return answer(Acknowledged());
    }
    if (Stopping() || !Nudge(std::move(*nudge))) {
      return answer({503, "text/plain; charset=utf-8", "the bot is stopping"});
    }
    answer(Acknowledged());
  }

 private:
  std::string AccountOf(const std::string& external_userid) {
    std::lock_guard lock(mu_);
    auto it = accounts_.find(external_userid);
    return it == accounts_.end() ? std::string() : it->second;
  }

  void RememberAccount(const std::string& external_userid, const std::string& open_kfid) {
    std::lock_guard lock(mu_);
    if (accounts_.insert_or_assign(external_userid, open_kfid).second) {
      account_order_.push_back(external_userid);
    }
    while (account_order_.size() > kRememberedCustomers) {
      accounts_.erase(account_order_.front());
      account_order_.pop_front();
    }
  }

  // Queues a pull for the account; starts the pull loop unless it is running (one pull at a time
  // per bot, so the cursor is never read by two pulls at once). False when the bot is stopping.
  bool Nudge(KfNudge nudge) {
    {
      std::lock_guard lock(mu_);
      pending_[nudge.open_kfid] = std::move(nudge.token);  // the newest token is the one to use
      if (pulling_) return true;
      pulling_ = true;
    }
    auto self = shared_from_this();
    if (group_->Spawn([self]() { return self->PullAll(); })) return true;
    std::lock_guard lock(mu_);
    pulling_ = false;
    return false;
  }

  asio::awaitable<void> PullAll() {
    co_await asio::this_coro::throw_if_cancelled(false);
    for (;;) {
      KfNudge next;
      {
        std::lock_guard lock(mu_);
        if (pending_.empty()) {
          pulling_ = false;
          co_return;
        }
        auto it = pending_.begin();
        next = {std::move(it->second), it->first};
        pending_.erase(it);
      }
      co_await Pull(std::move(next));
      auto state = co_await asio::this_coro::cancellation_state;
      if (state.cancelled() != asio::cancellation_type::none) co_return;
    }
  }

  asio::awaitable<void> Pull(KfNudge nudge) {
    // No cursor yet: the first pages are the last 3 days' history.
    const bool catching_up = cursors_->Get(context_.bot_uuid, nudge.open_kfid).empty();
    for (int page_number = 0; page_number < kMaxPagesPerPull; ++page_number) {
      const std::string cursor = cursors_->Get(context_.bot_uuid, nudge.open_kfid);
      auto answer = co_await api_.PostJson(
          "/kf/sync_msg", EncodeSyncRequest(cursor, nudge.token, nudge.open_kfid), "kf/sync_msg");
      if (!answer) {
        if (answer.error().code == ErrorCode::kCancelled) co_return;
        if (answer.error().code == ErrorCode::kUpstreamAuth) {
          context_.host->OnTrouble(answer.error().message);
        }
        Log(LogLevel::kWarning,
            "pulling WeCom customer-service messages failed: " + answer.error().message);
        co_return;
      }
      auto page = DecodeSyncPage(*answer);
      if (!page) {
        Log(LogLevel::kWarning,
            "WeCom kf/sync_msg answered a malformed page: " + page.error().message);
        co_return;
      }
      for (const auto& msg : page->messages) {
        co_await Take(msg, catching_up);
        auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none) co_return;
      }
      if (!page->next_cursor.empty()) {
        cursors_->Set(context_.bot_uuid, nudge.open_kfid, page->next_cursor);
      }
      // has_more can be 1 with an empty list: only the cursor says where the next page starts.
      if (!page->has_more || page->next_cursor.empty() || page->next_cursor == cursor) co_return;
    }
    Log(LogLevel::kWarning,
        "WeCom customer service: stopped pulling after 50 pages; the next "
        "callback continues");
  }

  asio::awaitable<void> Take(const util::JsonObject& msg, bool catching_up) {
    auto in = DecodeKfMessage(msg);
    if (!in) {
      Log(LogLevel::kWarning,
          "skipped a malformed WeCom customer-service message: " + in.error().message);
      co_return;
    }
    if (!seen_.FirstSighting(in->msgid)) co_return;
    if (!in->message) {
      Log(LogLevel::kDebug, "WeCom customer service: skipped " + in->skipped);
      co_return;
    }
    RememberAccount(in->external_userid, in->open_kfid);
    if (catching_up && in->send_time > 0 &&
        util::TimePoint(std::chrono::seconds(in->send_time)) < started_at_ - kHistoryGrace) {
      Log(LogLevel::kInfo, fmt::format("WeCom customer service: message {} predates the bot's "
                                       "start and is not answered",
                                       in->msgid));
      co_return;
    }
    domain::ReceivedMessage message = std::move(*in->message);
    if (!in->media_id.empty()) {
      const bool kept = co_await FetchImage(message, in->image_element, in->media_id, {});
      if (!kept) co_return;
    }
    context_.host->OnMessage(std::move(message));
  }

  const std::shared_ptr<KfCursorStore> cursors_;
  const util::TimePoint started_at_;
  common::RecentIds seen_;

  std::mutex mu_;
  bool pulling_ = false;                                   // guarded by mu_
  std::map<std::string, std::string> pending_;             // guarded by mu_; open_kfid -> token
  std::unordered_map<std::string, std::string> accounts_;  // guarded by mu_; customer -> open_kfid
  std::deque<std::string> account_order_;                  // guarded by mu_; oldest first
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeWeComCsAdapter(AdapterContext context,
                                                    std::shared_ptr<KfCursorStore> cursors) {
  return std::make_unique<common::CoreAdapter<Core, CheckKfDeliverable>>(std::move(context),
                                                                         std::move(cursors));
}

}  // namespace sb::platforms::wecom
