#include "platforms/wecom/wecom_adapter.hpp"

#include <fmt/format.h>

#include <boost/asio/this_coro.hpp>
#include <mutex>
#include <utility>

#include "platforms/common/acknowledge.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/wecom/wecom_base.hpp"
#include "platforms/wecom/wecom_callback.hpp"
#include "platforms/wecom/wecom_codec.hpp"

namespace sb::platforms::wecom {
namespace {

namespace asio = boost::asio;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::size_t kRememberedMessages = 10'000;

domain::PlatformAnswer StoppingAnswer() {
  return {503, "text/plain; charset=utf-8", "the bot is stopping"};
}

class Core : public WeComBase, public std::enable_shared_from_this<Core> {
 public:
  explicit Core(AdapterContext context)
      : WeComBase(std::move(context), "WeCom"), seen_(kRememberedMessages) {}

  void Start() { StartWith(shared_from_this()); }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    (void)reply_to_message_id;  // WeCom app messages cannot quote
    auto once = common::MakeSendOnce(std::move(done));
    auto target = ParseAppTarget(message.target_id);
    if (!target) return (*once)(tl::unexpected(target.error()));
    std::string agent = target->agent_id.empty() ? Agent() : target->agent_id;
    if (agent.empty()) {
      return (*once)(util::Fail(ErrorCode::kInvalidArgument,
                                "no WeCom callback has named the app's agent id yet: address the "
                                "user as <userid>|<agentid>"));
    }
    auto self = shared_from_this();
    auto text_body = [user = target->user_id, agent](std::string_view text) {
      return EncodeAppText(user, agent, text);
    };
    auto media_body = [user = target->user_id, agent](std::string_view type,
                                                      std::string_view media_id) {
      return EncodeAppMedia(user, agent, type, media_id);
    };
    const bool started = !Stopping() && group_->Spawn([self, parts = PlanParts(message.chain),
                                                       text_body, media_body, once]() mutable {
      return self->SendParts(std::move(parts), "/message/send", text_body, media_body, once);
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
    auto inbound = DecodeAppMessage(opened.fields);
    if (!inbound) {
      Log(LogLevel::kWarning, "refused a malformed WeCom message: " + inbound.error().message);
      return answer({400, "text/plain; charset=utf-8", inbound.error().message});
    }
    if (!inbound->agent_id.empty()) LearnAgent(inbound->agent_id);
    // WeCom retries a callback it got no answer to within 5 s, with the same MsgId.
    if (!seen_.FirstSighting(inbound->dedupe_key)) return answer(Acknowledged());
    if (!inbound->message) {
      Log(LogLevel::kDebug,
          fmt::format("WeCom: skipped {} from {}", inbound->skipped, inbound->user_id));
      return answer(Acknowledged());
    }
    if (Stopping()) {
      seen_.Forget(inbound->dedupe_key);
      return answer(StoppingAnswer());
    }
    auto self = shared_from_this();
    const std::string key = inbound->dedupe_key;
    auto work = [self, in = std::move(*inbound)]() mutable { return self->Deliver(std::move(in)); };
    if (!common::AcknowledgeThenRun(*group_, std::move(work), answer, Acknowledged(),
                                    StoppingAnswer())) {
      seen_.Forget(key);
    }
  }

 private:
  std::string Agent() {
    std::lock_guard lock(mu_);
    return agent_id_;
  }

  void LearnAgent(const std::string& agent_id) {
    std::lock_guard lock(mu_);
    agent_id_ = agent_id;
  }

  asio::awaitable<void> Deliver(AppInbound in) {
    domain::ReceivedMessage message = std::move(*in.message);
    if (message.chain.size() > in.image_element &&
        message.chain[in.image_element].type == domain::ElementType::kImage) {
      const bool kept = co_await FetchImage(message, in.image_element, in.media_id, in.pic_url);
      auto state = co_await asio::this_coro::cancellation_state;
      if (state.cancelled() != asio::cancellation_type::none || !kept) co_return;
    }
    context_.host->OnMessage(std::move(message));
  }

  common::RecentIds seen_;
  std::mutex mu_;
  std::string agent_id_;  // guarded by mu_; the app's AgentID as the last callback named it
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeWeComAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, CheckAppDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::wecom
