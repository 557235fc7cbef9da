#include "platforms/officialaccount/oa_adapter.hpp"

#include <fmt/format.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/access_token.hpp"
#include "platforms/common/adapter_core.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/common/rest_call.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/common/wechat_callback.hpp"
#include "platforms/common/wechat_crypto.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/officialaccount/oa_codec.hpp"
#include "util/call_once.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::officialaccount {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::string_view kDefaultBase = "https://api.weixin.qq.com";
constexpr std::size_t kMaxBodyBytes = 1024 * 1024;
// WeChat gives each attempt 5 s and makes three; a held attempt is let go a little before.
constexpr auto kHoldPerAttempt = 4500ms;
constexpr int kAttempts = 3;
// A reply ready between two attempts waits this long for the next before it is pushed instead.
constexpr auto kNextAttemptWait = 6s;
// Callbacks older or newer than this are replays (WeChat retries within seconds).
constexpr auto kFreshness = std::chrono::seconds(300);
constexpr std::size_t kRememberedDeliveries = 4096;
constexpr std::size_t kRememberedNonces = 10'000;
constexpr std::size_t kMaxQueuedReplies = 20;  // per user, passive mode
constexpr std::size_t kMaxUsers = 4096;        // passive mode queues
// Passive mode: a message with no reply after this no longer holds the user's later ones back.
constexpr auto kGiveUpAnswering = std::chrono::minutes(5);

enum class Mode { kDrop, kPassive };

using AnswerOnce = util::CallOnce<WebhookAnswer>;

WebhookAnswer Text(int status, std::string body) { return {status, "text/plain", std::move(body)}; }
WebhookAnswer Success() { return Text(200, "success"); }  // "received; do not retry"

// One message in drop mode, from its first delivery until its reply went out (or was pushed).
struct Delivery {
  std::string user;
  std::string account;
  bool safe = false;
  int attempts = 0;
  std::uint64_t held_attempt = 0;    // which attempt `held` belongs to
  std::shared_ptr<AnswerOnce> held;  // the attempt waiting for the reply
  std::optional<std::string> reply;  // ready between attempts, not yet taken
  std::shared_ptr<common::SendOnce> reply_done;
  bool replied = false;  // the passive answer went out or the reply was pushed
};

// Passive mode: per user, replies not yet handed out and messages still being answered.
struct UserQueue {
  std::deque<std::string> replies;
  int answering = 0;
  util::TimePoint answering_since;  // a message the pipeline never answers is given up on
};

class Core : public common::AdapterCore<Core> {
 public:
  explicit Core(AdapterContext context)
      : AdapterCore(std::move(context)),
        token_(common::ConfigString(context_.config, "token")),
        app_id_(common::ConfigString(context_.config, "AppID")),
        app_secret_(common::ConfigString(context_.config, "AppSecret")),
        loading_(common::ConfigString(context_.config, "LoadingMessage")),
        mode_(common::ConfigString(context_.config, "Mode", "drop") == "passive" ? Mode::kPassive
                                                                                 : Mode::kDrop),
        base_(common::ConfigBaseUrl(context_.config, "api_base_url", kDefaultBase)),
        tokens_(*context_.clock, [this] { return FetchToken(); }),
        seen_(kRememberedDeliveries),
        nonces_(kRememberedNonces),
        nonce_bodies_(kRememberedNonces) {
    endpoint_.token = token_;
    endpoint_.receive_id = app_id_;
    if (auto key = common::WeChatAesKey(common::ConfigString(context_.config, "EncodingAESKey"))) {
      endpoint_.aes_key = std::move(*key);
    }
  }

  void Start() {
    const std::string mode = common::ConfigString(context_.config, "Mode", "drop");
    if (token_.empty()) {
      context_.host->OnTrouble("no token configured: every callback would be refused");
      return;
    }
    if (mode != "drop" && mode != "passive") {
      context_.host->OnTrouble("Mode must be drop or passive");
      return;
    }
    if (endpoint_.aes_key.empty()) {
      Log(LogLevel::kWarning,
          "EncodingAESKey is not 43 base64 characters: only plaintext-mode callbacks can be read");
    }
    context_.host->OnConnected(app_id_);
    Log(LogLevel::kInfo, fmt::format("waiting for WeChat callbacks ({} mode)", mode));
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = common::MakeSendOnce(std::move(done));
    std::string text = ReplyText(message.chain);
    if (stopping()) {
      (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
      return;
    }
    if (!reply_to_message_id.empty()) {
      if (mode_ == Mode::kDrop && OfferPassiveReply(reply_to_message_id, text, once)) return;
      if (mode_ == Mode::kPassive && QueueForNextMessage(message.target_id, text, once)) return;
    }
    Push(message.target_id, std::move(text), once);
  }

  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    const common::WeChatQuery query = common::ReadWeChatQuery(call);
    if (call.method == "GET") {  // URL verification: the plain signature, echostr as it is
      if (!common::WeChatVerifyPlainSignature(token_, query.timestamp, query.nonce,
                                              query.signature) ||
          query.echostr.empty()) {
        answer(Text(401, "wrong signature"));
        return;
      }
      answer(Text(200, query.echostr));
      return;
    }
    if (call.method != "POST") {
      answer(Text(405, "use GET or POST"));
      return;
    }
    if (call.body.size() > kMaxBodyBytes) {
      answer(Text(413, "the body is too large"));
      return;
    }
    const bool safe = query.encrypt_type == "aes";
    auto fields = Open(query, call.body, safe);
    if (!fields) {
      const bool forged = fields.error().code == ErrorCode::kUnauthenticated;
      Log(LogLevel::kWarning, fmt::format("refused a {} callback: {}",
                                          forged ? "forged" : "malformed", fields.error().message));
      answer(Text(forged ? 401 : 400, fields.error().message));
      return;
    }
    auto decoded = DecodeCallback(*fields);
    if (!decoded) {
      Log(LogLevel::kWarning, "refused a malformed callback: " + decoded.error().message);
      answer(Text(400, decoded.error().message));
      return;
    }
    if (!decoded->message) {
      answer(Success());
      return;
    }
    if (stopping()) {
      answer(Text(503, "the bot is stopping"));
      return;
    }
    auto once = std::make_shared<AnswerOnce>(std::move(answer),
                                             [] { return Text(503, "the bot is stopping"); });
    if (mode_ == Mode::kDrop) {
      HandleDrop(std::move(*decoded), safe, std::move(once));
    } else {
      HandlePassive(std::move(*decoded), safe, std::move(once));
    }
  }

 private:
  // Held WeChat attempts are answered before the group closes, so none waits out its timeout.
  void OnStopping() override { ReleaseHeldAttempts(); }

  // The callback's fields once its signature, freshness and nonce are checked.
  util::Result<common::WeChatFields> Open(const common::WeChatQuery& query, const std::string& body,
                                          bool safe) {
    if (!common::WeChatTimestampFresh(query.timestamp, context_.clock->Now(), kFreshness)) {
      return util::Fail(ErrorCode::kUnauthenticated, "the timestamp is missing or stale");
    }
    util::Result<common::WeChatFields> fields;
    if (safe) {
      if (endpoint_.aes_key.empty()) {
        return util::Fail(ErrorCode::kInvalidArgument,
                          "a safe-mode callback, but EncodingAESKey is not configured correctly");
      }
      fields = common::OpenWeChatXml(endpoint_, query, body);
    } else {
      if (auto ok = common::WeChatVerifyPlainSignature(token_, query.timestamp, query.nonce,
                                                       query.signature);
          !ok) {
        return tl::unexpected(ok.error());
      }
      fields = common::ParseWeChatXml(body);
    }
    if (!fields) return fields;
    // The plain signature does not cover the body: a nonce that comes back with another body is
    // a replayed signature, not WeChat's retry.
    const std::string pair = query.timestamp + ":" + query.nonce + ":" + util::Sha256Hex(body);
    const bool nonce_seen = !nonces_.FirstSighting(query.timestamp + ":" + query.nonce);
    if (nonce_bodies_.FirstSighting(pair) && nonce_seen) {
      nonce_bodies_.Forget(pair);  // so that the same replay is refused again
      return util::Fail(ErrorCode::kUnauthenticated, "a reused nonce with another body");
    }
    return fields;
  }

  WebhookAnswer ReplyAnswer(const std::string& user, const std::string& account, bool safe,
                            const std::string& text) {
    const std::int64_t now = util::ToUnixSeconds(context_.clock->Now());
    std::string xml = PassiveTextReply(user, account, now, text);
    if (!safe) return {200, "text/xml; charset=utf-8", std::move(xml)};
    std::uint32_t random = 0;
    util::RandomBytes(reinterpret_cast<unsigned char*>(&random), sizeof random);
    const std::string nonce = std::to_string(random);
    auto sealed = common::SealWeChatXml(endpoint_, xml, std::to_string(now), nonce);
    if (!sealed) {  // only a broken key gets here, and then nothing was readable either
      Log(LogLevel::kError, "could not seal the reply: " + sealed.error().message);
      return Success();
    }
    return {200, "text/xml; charset=utf-8", std::move(*sealed)};
  }

  // Drop mode: every delivery of a message is held until the reply is ready or the attempt's
  // time is up; WeChat then retries, and the last attempt is answered "success".
  void HandleDrop(DecodedCallback decoded, bool safe, std::shared_ptr<AnswerOnce> answer) {
    const std::string id = decoded.delivery_id;
    bool first = false;
    std::uint64_t attempt = 0;
    std::optional<std::string> ready;
    std::shared_ptr<common::SendOnce> ready_done;
    std::shared_ptr<AnswerOnce> superseded;
    std::vector<Delivery> evicted;
    {
      std::lock_guard lock(mu_);
      auto [it, inserted] = deliveries_.try_emplace(id);
      Delivery& d = it->second;
      if (inserted) {
        first = true;
        order_.push_back(id);
        d.user = decoded.user_openid;
        d.account = decoded.account_id;
        d.safe = safe;
        evicted = PruneDeliveries();
      }
      ++d.attempts;
      if (d.replied) {
        // A late retry of a message already answered.
      } else if (d.reply) {
        ready = std::exchange(d.reply, std::nullopt);
        ready_done = std::exchange(d.reply_done, nullptr);
        d.replied = true;
      } else {
        superseded = std::exchange(d.held, answer);
        attempt = d.held_attempt = ++attempt_counter_;
      }
    }
    evicted.clear();
    if (superseded) (*superseded)(Text(503, "superseded by WeChat's retry"));
    if (ready) {
      (*answer)(ReplyAnswer(decoded.user_openid, decoded.account_id, safe, *ready));
      (*ready_done)(domain::SendReceipt{});
    } else if (attempt == 0) {
      (*answer)(Success());
    } else {
      auto self = shared_from_this();
      if (!group_->Spawn([self, id, attempt]() { return self->HoldAttempt(id, attempt); })) {
        (*answer)(Text(503, "the bot is stopping"));
      }
    }
    if (first) {
      context_.host->OnMessage(std::move(*decoded.message));
    } else if (!first && attempt != 0) {
      Log(LogLevel::kDebug, fmt::format("WeChat retried message {}; still waiting", id));
    }
  }

  asio::awaitable<void> HoldAttempt(std::string id, std::uint64_t attempt) {
    co_await asio::this_coro::throw_if_cancelled(false);
    asio::steady_timer timer(co_await asio::this_coro::executor, kHoldPerAttempt);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    std::shared_ptr<AnswerOnce> held;
    bool last = false;
    {
      std::lock_guard lock(mu_);
      auto it = deliveries_.find(id);
      if (it == deliveries_.end() || it->second.held_attempt != attempt) co_return;
      held = std::exchange(it->second.held, nullptr);
      last = it->second.attempts >= kAttempts;
    }
    if (!held) co_return;
    if (last) {
      Log(LogLevel::kInfo,
          fmt::format("no reply to message {} within WeChat's three attempts; it will be sent "
                      "through the customer-service API when ready",
                      id));
      (*held)(Success());
    } else {
      (*held)(Text(503, "the reply is not ready yet"));  // WeChat retries
    }
  }

  // The reply for `message_id` in drop mode: into the held attempt, or kept for the next one.
  // False when the message is unknown or already answered (the caller pushes it).
  bool OfferPassiveReply(const std::string& message_id, const std::string& text,
                         const std::shared_ptr<common::SendOnce>& once) {
    std::shared_ptr<AnswerOnce> held;
    Delivery copy;
    {
      std::lock_guard lock(mu_);
      auto it = deliveries_.find(message_id);
      if (it == deliveries_.end() || it->second.replied || it->second.reply) return false;
      Delivery& d = it->second;
      if (!d.held && d.attempts >= kAttempts) return false;  // no attempt will come any more
      if (d.held) {
        held = std::exchange(d.held, nullptr);
        d.replied = true;
      } else {
        d.reply = text;
        d.reply_done = once;
      }
      copy.user = d.user;
      copy.account = d.account;
      copy.safe = d.safe;
    }
    if (held) {
      (*held)(ReplyAnswer(copy.user, copy.account, copy.safe, text));
      (*once)(domain::SendReceipt{});
      return true;
    }
    auto self = shared_from_this();
    if (!group_->Spawn([self, message_id]() { return self->PushIfUnclaimed(message_id); })) {
      (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
    }
    return true;
  }

  // A reply kept for WeChat's next attempt that did not come: push it instead.
  asio::awaitable<void> PushIfUnclaimed(std::string message_id) {
    co_await asio::this_coro::throw_if_cancelled(false);
    asio::steady_timer timer(co_await asio::this_coro::executor, kNextAttemptWait);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    std::optional<std::string> reply;
    std::shared_ptr<common::SendOnce> once;
    std::string user;
    {
      std::lock_guard lock(mu_);
      auto it = deliveries_.find(message_id);
      if (it == deliveries_.end() || !it->second.reply) co_return;
      reply = std::exchange(it->second.reply, std::nullopt);
      once = std::exchange(it->second.reply_done, nullptr);
      it->second.replied = true;
      user = it->second.user;
    }
    if (ec) co_return;  // stopping: `once` answers kCancelled as it goes
    co_await PushAll(user, std::move(*reply), once);
  }

  // Passive mode: the first message is answered with the loading text and handed on; until its
  // reply is fetched, the user's messages only ask for it (as LangBot does).
  void HandlePassive(DecodedCallback decoded, bool safe, std::shared_ptr<AnswerOnce> answer) {
    const bool first = seen_.FirstSighting(decoded.delivery_id);
    std::optional<std::string> reply;
    bool hand_on = false;
    {
      std::lock_guard lock(mu_);
      if (users_.size() >= kMaxUsers && !users_.contains(decoded.user_openid)) {
        std::erase_if(users_, [](const auto& entry) {
          return entry.second.replies.empty() && entry.second.answering == 0;
        });
      }
      UserQueue& queue = users_[decoded.user_openid];
      const util::TimePoint now = context_.clock->Now();
      if (queue.answering > 0 && now - queue.answering_since > kGiveUpAnswering) {
        queue.answering = 0;
      }
      if (!queue.replies.empty()) {
        reply = std::move(queue.replies.front());
        queue.replies.pop_front();
      } else if (queue.answering == 0 && first) {
        ++queue.answering;
        queue.answering_since = now;
        hand_on = true;
      }
    }
    (*answer)(
        ReplyAnswer(decoded.user_openid, decoded.account_id, safe, reply ? *reply : loading_));
    if (hand_on) context_.host->OnMessage(std::move(*decoded.message));
  }

  bool QueueForNextMessage(const std::string& user, std::string text,
                           const std::shared_ptr<common::SendOnce>& once) {
    {
      std::lock_guard lock(mu_);
      auto it = users_.find(user);
      if (it == users_.end()) return false;
      UserQueue& queue = it->second;
      if (queue.answering > 0) --queue.answering;
      queue.replies.push_back(std::move(text));
      while (queue.replies.size() > kMaxQueuedReplies) queue.replies.pop_front();
    }
    (*once)(domain::SendReceipt{});
    return true;
  }

  // The oldest deliveries past the bound, taken out of the map (mu_ held); the caller destroys
  // them after unlocking, since an attempt still held answers 503 as it goes.
  std::vector<Delivery> PruneDeliveries() {
    std::vector<Delivery> evicted;
    while (order_.size() > kRememberedDeliveries) {
      if (auto it = deliveries_.find(order_.front()); it != deliveries_.end()) {
        evicted.push_back(std::move(it->second));
        deliveries_.erase(it);
      }
      order_.pop_front();
    }
    return evicted;
  }

  void ReleaseHeldAttempts() {
    std::vector<std::shared_ptr<AnswerOnce>> held;
    {
      std::lock_guard lock(mu_);
      for (auto& [id, d] : deliveries_) {
        if (d.held) held.push_back(std::exchange(d.held, nullptr));
      }
    }
    for (auto& answer : held) (*answer)(Text(503, "the bot is stopping"));
  }

  void Push(std::string user, std::string text, std::shared_ptr<common::SendOnce> once) {
    auto self = shared_from_this();
    SpawnSend(once, [self, user = std::move(user), text = std::move(text), once]() {
      return self->PushAll(user, text, once);
    });
  }

  asio::awaitable<void> PushAll(std::string user, std::string text,
                                std::shared_ptr<common::SendOnce> once) {
    co_await asio::this_coro::throw_if_cancelled(false);
    if (app_secret_.empty()) {
      (*once)(util::Fail(ErrorCode::kInvalidArgument,
                         "this reply is too late for WeChat's callback and AppSecret is not "
                         "configured for the customer-service API"));
      co_return;
    }
    for (const std::string& body : CustomTextBodies(user, text)) {
      auto sent = co_await CallWithToken("/cgi-bin/message/custom/send", body);
      if (!sent) {
        Log(LogLevel::kWarning, "a customer-service message failed: " + sent.error().message);
        (*once)(tl::unexpected(sent.error()));
        co_return;
      }
    }
    (*once)(domain::SendReceipt{});
  }

  asio::awaitable<util::Result<common::IssuedToken>> FetchToken() {
    auto request = common::JsonRequest(
        "GET", base_ + "/cgi-bin/token?grant_type=client_credential&appid=" +
                   common::QueryEscape(app_id_) + "&secret=" + common::QueryEscape(app_secret_));
    auto response = co_await common::SendWithRetry(*context_.http, std::move(request));
    if (!response) {
      co_return util::Fail(response.error().code,
                           "fetching the access token failed: " + response.error().message);
    }
    if (response->status != 200) {
      co_return util::Fail(
          ErrorCode::kUpstreamFailed,
          fmt::format("fetching the access token failed: HTTP {}", response->status));
    }
    co_return DecodeTokenAnswer(response->body);
  }

  // POSTs `body` to `path` with the access token; a refused token is fetched again once.
  asio::awaitable<util::Result<ApiStatus>> CallWithToken(std::string path, std::string body) {
    for (int attempt = 0;; ++attempt) {
      auto token = co_await tokens_.Get();
      if (!token) co_return tl::unexpected(token.error());
      auto request = common::JsonRequest("POST", base_ + path + "?access_token=" + *token, body);
      auto response = co_await common::SendWithRetry(*context_.http, std::move(request));
      if (!response) co_return tl::unexpected(response.error());
      if (response->status != 200) {
        co_return util::Fail(ErrorCode::kUpstreamFailed,
                             fmt::format("WeChat answered HTTP {}", response->status));
      }
      auto status = DecodeApiStatus(response->body);
      if (!status) co_return util::Fail(ErrorCode::kUpstreamFailed, status.error().message);
      if (IsTokenRefused(status->errcode) && attempt == 0) {
        tokens_.Invalidate(*token);
        continue;
      }
      if (status->errcode != 0) {
        co_return util::Fail(ErrorCode::kUpstreamFailed,
                             fmt::format("WeChat refused the message (errcode {}): {}",
                                         status->errcode, status->errmsg));
      }
      co_return *status;
    }
  }

  const std::string token_;
  const std::string app_id_;
  const std::string app_secret_;
  const std::string loading_;
  const Mode mode_;
  const std::string base_;
  common::WeChatEndpoint endpoint_;
  common::AccessTokenCache tokens_;
  common::RecentIds seen_;          // passive mode: deliveries handed on
  common::RecentIds nonces_;        // timestamp:nonce of accepted callbacks
  common::RecentIds nonce_bodies_;  // timestamp:nonce:body-hash of accepted callbacks

  std::mutex mu_;
  std::unordered_map<std::string, Delivery> deliveries_;  // guarded by mu_; drop mode
  std::deque<std::string> order_;                         // guarded by mu_; oldest first
  std::uint64_t attempt_counter_ = 0;                     // guarded by mu_
  std::unordered_map<std::string, UserQueue> users_;      // guarded by mu_; passive mode
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeOfficialAccountAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, officialaccount::CheckDeliverable>>(
      std::move(context));
}

}  // namespace sb::platforms::officialaccount
