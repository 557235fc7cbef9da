#include "platforms/telegram/telegram_adapter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cmath>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/telegram/telegram_codec.hpp"
#include "platforms/telegram/telegram_stream.hpp"
#include "util/call_once.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::telegram {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using domain::LogLevel;
using util::ErrorCode;

constexpr int kPollTimeoutSeconds = 25;
constexpr std::int64_t kMaxDownloadBytes = 10 * 1024 * 1024;
constexpr std::chrono::milliseconds kBackoffBase = 1s;
constexpr std::chrono::milliseconds kBackoffMax = 30s;
constexpr std::chrono::milliseconds kCallTimeout = 30s;
constexpr std::chrono::milliseconds kUploadTimeout = 60s;
constexpr std::size_t kMaxResponseBytes = 4 * 1024 * 1024;
constexpr std::size_t kRecentUpdates = 1024;  // update_ids remembered against redelivery
constexpr std::size_t kMaxNames = 4096;       // user names remembered for outgoing mentions

using common::ConfigBool;
using common::ConfigString;

// Telegram tokens are "<digits>:<letters, digits, _ and ->"; anything else would also change the
// request path, so it is refused before any call.
bool PlausibleToken(std::string_view token) {
  const auto colon = token.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon + 1 == token.size()) return false;
  return std::all_of(token.begin(), token.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '_' || c == '-';
  });
}

double JitterUnit() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

asio::awaitable<bool> IsCancelled() {
  auto state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() != asio::cancellation_type::none;
}

asio::awaitable<void> WaitUntilCancelled() {
  asio::steady_timer timer(co_await asio::this_coro::executor,
                           asio::steady_timer::time_point::max());
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

// What one Bot API call came to. Every text in it is already free of the token.
struct Outcome {
  bool ok = false;
  util::Json result = nullptr;
  util::Error error{};    // when !ok: what Send reports
  std::string trouble{};  // when !ok: what OnTrouble shows
  int retry_after = 0;    // seconds Telegram asked us to wait (429)
  bool entity_parse_error = false;
  bool cancelled = false;
};

// Runs a Send callback exactly once: with the coroutine's result, or with kCancelled if the
// coroutine is destroyed without giving one (an exception, an executor that never ran it).
// Everything the adapter runs. Coroutines hold it by shared_ptr, so it outlives the adapter
// object if that is destroyed without Stop.
class Core : public std::enable_shared_from_this<Core> {
 public:
  explicit Core(AdapterContext context)
      : context_(std::move(context)),
        token_(ConfigString(context_.config, "token")),
        markdown_(ConfigBool(context_.config, "markdown_card", true)),
        stream_reply_(ConfigBool(context_.config, "enable-stream-reply", false)),
        mode_(ConfigString(context_.config, "mode")),
        webhook_mode_(mode_ == "webhook"),
        secret_(webhook_mode_ ? util::RandomUrlSafe(32) : std::string()),
        group_(CoroutineGroup::Make(context_.executor)) {
    std::string base = ConfigString(context_.config, "api_base_url");
    while (!base.empty() && base.back() == '/') base.pop_back();
    base_ = base.empty() ? "https://api.telegram.org" : base;
  }

  void Start() {
    if (token_.empty()) {
      context_.host->OnTrouble(
          "no token configured: create a bot with @BotFather and paste its token");
      return;
    }
    if (!PlausibleToken(token_)) {
      context_.host->OnTrouble("the token is not a Telegram bot token (<digits>:<letters>)");
      return;
    }
    if (!mode_.empty() && mode_ != "polling" && !webhook_mode_) {
      Log(LogLevel::kWarning,
          fmt::format("unknown mode '{}': polling instead", mode_.substr(0, 32)));
    }
    auto self = shared_from_this();
    group_->Spawn([self]() { return self->Run(); });
  }

  void Stop(std::function<void()> stopped) {
    if (stopping_.exchange(true)) return;
    group_->Close(std::move(stopped));
  }

  // The adapter object went away without Stop: cancel what runs, nobody waits for it.
  void Abandon() {
    if (stopping_.exchange(true)) return;
    group_->Close(nullptr);
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = common::MakeSendOnce(std::move(done));
    EncodeOptions options;
    options.markdown = markdown_;
    options.display_name = [this](const std::string& id) { return NameOf(id); };
    auto calls = EncodeOutgoing(message, reply_to_message_id, options);
    if (!calls) {
      (*once)(tl::unexpected(calls.error()));
      return;
    }
    auto shared_calls = std::make_shared<const std::vector<OutboundCall>>(std::move(*calls));
    auto self = shared_from_this();
    const bool started = !stopping_ && group_->Spawn([self, shared_calls, once]() {
      return self->SendAll(shared_calls, once);
    });
    if (!started) (*once)(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
  }

  // With enable-stream-reply, a reply is one message edited while the model writes it.
  std::shared_ptr<ReplyStream> BeginStream(domain::TargetType chat_type, std::string chat_id,
                                           std::string reply_to_message_id) {
    if (!stream_reply_ || stopping_) return nullptr;
    EncodeOptions options;
    options.markdown = markdown_;
    std::weak_ptr<Core> weak = weak_from_this();
    options.display_name = [weak](const std::string& id) {
      auto self = weak.lock();
      return self ? self->NameOf(id) : id;
    };
    auto self = shared_from_this();
    return MakeEditStream(
        group_,
        [self](const OutboundCall& call) -> asio::awaitable<util::Result<util::Json>> {
          return self->RunOne(call);
        },
        [weak](domain::OutgoingMessage message, std::string reply_to,
               std::function<void(util::Result<domain::SendReceipt>)> done) {
          auto self = weak.lock();
          if (!self) return done(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
          self->Send(std::move(message), std::move(reply_to), std::move(done));
        },
        domain::OutgoingMessage{chat_type, std::move(chat_id), {}}, std::move(reply_to_message_id),
        std::move(options));
  }

  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    if (!webhook_mode_) {
      answer(
          {404, "application/json",
           R"({"ok":false,"description":"this bot polls Telegram; it takes no webhook calls"})"});
      return;
    }
    // The secret comes before anything else: a forged call costs one comparison.
    if (!util::ConstantTimeEquals(call.Header("x-telegram-bot-api-secret-token"), secret_)) {
      answer({401, "application/json", R"({"ok":false,"description":"wrong secret token"})"});
      return;
    }
    if (call.method != "POST") {
      answer({405, "application/json", R"({"ok":false,"description":"use POST"})"});
      return;
    }
    auto update = util::ParseJson(call.body);
    if (!update) {
      answer({400, "application/json", R"({"ok":false,"description":"malformed JSON"})"});
      return;
    }
    auto self = shared_from_this();
    const bool started = !stopping_ && group_->Spawn([self, update = std::move(*update)]() {
      return self->Deliver(update);
    });
    if (!started) {
      // Telegram keeps the update and retries; the next run takes it.
      answer({503, "application/json", R"({"ok":false,"description":"the bot is stopping"})"});
      return;
    }
    answer({200, "application/json", "{}"});
  }

 private:
  std::string Scrub(std::string text) const {
    if (token_.size() < 4) return text;
    for (const std::string& secret : {token_, EncodedToken()}) {
      for (auto pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos)) {
        text.replace(pos, secret.size(), "<token>");
      }
    }
    return text;
  }

  std::string EncodedToken() const {
    std::string encoded;
    for (char c : token_) encoded += c == ':' ? std::string("%3A") : std::string(1, c);
    return encoded;
  }

  void Log(LogLevel level, std::string text) { context_.host->Log(level, Scrub(std::move(text))); }

  void Trouble(const std::string& why) { context_.host->OnTrouble(Scrub(why)); }

  std::string NameOf(const std::string& user_id) {
    std::lock_guard lock(mu_);
    auto it = names_.find(user_id);
    return it == names_.end() ? std::string() : it->second;
  }

  void RememberName(const std::string& user_id, const std::string& name) {
    if (user_id.empty() || name.empty()) return;
    std::lock_guard lock(mu_);
    if (names_.size() >= kMaxNames) names_.clear();
    names_[user_id] = name;
  }

  // False when the update was already handled (Telegram redelivers after a lost answer).
  bool FirstSighting(std::int64_t update_id) {
    std::lock_guard lock(mu_);
    if (!recent_set_.insert(update_id).second) return false;
    recent_.push_back(update_id);
    if (recent_.size() > kRecentUpdates) {
      recent_set_.erase(recent_.front());
      recent_.pop_front();
    }
    return true;
  }

  BotIdentity Identity() {
    std::lock_guard lock(mu_);
    return bot_;
  }

  Outcome FromTransport(std::string_view method, const util::Error& error) const {
    Outcome o;
    o.cancelled = error.code == ErrorCode::kCancelled;
    const std::string message = Scrub(error.message);
    o.error = {error.code, fmt::format("telegram {} failed: {}", method, message)};
    o.trouble = fmt::format("{} failed: {}", method, message);
    return o;
  }

  Outcome FromApi(std::string_view method, ApiResponse api) const {
    Outcome o;
    if (api.ok) {
      o.ok = true;
      o.result = std::move(api.result);
      return o;
    }
    std::string description = Scrub(api.description);
    if (description.empty()) description = fmt::format("error {}", api.error_code);
    o.retry_after = api.retry_after;
    o.entity_parse_error = IsEntityParseError(api);
    if (api.error_code == 401) {
      o.trouble = "the token was refused (401 Unauthorized)";
    } else {
      o.trouble = fmt::format("{} failed: {} {}", method, api.error_code, description);
    }
    if (api.error_code == 429) {
      o.error = {ErrorCode::kUpstreamRateLimited,
                 fmt::format("telegram is rate limiting the bot: {}", description)};
    } else {
      o.error = {ErrorCode::kUpstreamFailed, "telegram refused: " + description};
    }
    return o;
  }

  // One Bot API call: JSON parameters, or multipart when a file is uploaded.
  asio::awaitable<Outcome> Call(std::string method, util::JsonObject params,
                                std::chrono::milliseconds total, const Upload* upload = nullptr) {
    net::HttpRequest request;
    request.method = "POST";
    request.url = base_ + "/bot" + token_ + "/" + method;
    if (upload != nullptr) {
      const std::string boundary = "sb-" + util::RandomUrlSafe(24);
      request.headers.emplace_back("Content-Type", "multipart/form-data; boundary=" + boundary);
      request.body = EncodeMultipart(params, *upload, boundary);
    } else {
      request.headers.emplace_back("Content-Type", "application/json");
      request.body = util::SerializeJson(params);
    }
    request.timeouts.connect = 10s;
    request.timeouts.total = total;
    request.timeouts.idle = total;  // a long poll is silent until it answers
    request.max_response_bytes = kMaxResponseBytes;
    auto response = co_await context_.http->Send(std::move(request));
    if (!response) co_return FromTransport(method, response.error());
    auto api = DecodeApiResponse(response->status, response->body);
    if (!api) co_return FromTransport(method, api.error());
    co_return FromApi(method, std::move(*api));
  }

  // Waits before the next try: Telegram's retry_after when it gave one, else 1 s doubling to
  // 30 s, with jitter so that many bots do not retry in step. False when cancelled.
  asio::awaitable<bool> Pause(int& attempt, int retry_after) {
    std::chrono::milliseconds delay;
    if (retry_after > 0) {
      delay = std::chrono::seconds(retry_after);
    } else {
      const double exp = static_cast<double>(kBackoffBase.count()) * std::pow(2.0, attempt);
      const double capped = std::min(exp, static_cast<double>(kBackoffMax.count()));
      delay =
          std::chrono::milliseconds(static_cast<std::int64_t>(capped * (0.5 + 0.5 * JitterUnit())));
    }
    attempt = std::min(attempt + 1, 16);
    asio::steady_timer timer(co_await asio::this_coro::executor, delay);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    const bool cancelled = co_await IsCancelled();
    co_return !ec && !cancelled;
  }

  asio::awaitable<void> Run() {
    co_await asio::this_coro::throw_if_cancelled(false);
    int attempt = 0;
    BotIdentity bot;
    for (;;) {
      Outcome me = co_await Call("getMe", util::JsonObject(), kCallTimeout);
      if (me.cancelled) co_return;
      if (me.ok) {
        auto identity = DecodeBotIdentity(me.result);
        if (identity) {
          bot = std::move(*identity);
          break;
        }
        me.trouble = "getMe failed: " + identity.error().message;
      }
      Trouble(me.trouble);
      const bool go_on = co_await Pause(attempt, me.retry_after);
      if (!go_on) co_return;
    }
    {
      std::lock_guard lock(mu_);
      bot_ = bot;
    }
    const std::string account = std::to_string(bot.id);
    context_.host->OnConnected(account);
    Log(LogLevel::kInfo, fmt::format("signed in to Telegram as @{} ({})", bot.username, account));
    if (webhook_mode_) {
      co_await RunWebhook(account);
    } else {
      std::optional<std::int64_t> offset;  // one past the newest update handed to the host
      std::optional<std::int64_t> sent;    // the offset the last getUpdates confirmed
      co_await RunPolling(account, offset, sent);
      co_await ConfirmOnStop(offset, sent);
    }
  }

  // Stopping after a batch was handed on but before the next getUpdates confirmed it: confirm
  // it now, or the bot's next start (a restart) would get those updates again and answer twice.
  asio::awaitable<void> ConfirmOnStop(std::optional<std::int64_t> offset,
                                      std::optional<std::int64_t> sent) {
    if (!offset || offset == sent) co_return;
    // Not after the lease was lost: the confirmation would drop updates the new owner needs.
    if (!context_.host->MayAct()) co_return;
    co_await asio::this_coro::reset_cancellation_state();
    util::JsonObject params{{"offset", *offset}, {"timeout", 0}, {"limit", 1}};
    (void)co_await Call("getUpdates", std::move(params), std::chrono::seconds(3));
  }

  asio::awaitable<void> RunPolling(const std::string& account, std::optional<std::int64_t>& offset,
                                   std::optional<std::int64_t>& sent) {
    int attempt = 0;
    bool troubled = false;
    bool webhook_deleted = false;
    for (;;) {
      const bool cancelled = co_await IsCancelled();
      if (cancelled) co_return;
      if (!context_.host->MayAct()) co_return;  // another instance polls now
      Outcome outcome;
      const bool deleting = !webhook_deleted;
      if (deleting) {
        // getUpdates answers 409 while a webhook is set (LangBot does not clear it).
        util::JsonObject params{{"drop_pending_updates", false}};
        outcome = co_await Call("deleteWebhook", std::move(params), kCallTimeout);
      } else {
        // After trouble one short poll shows at once whether Telegram answers again; a long
        // poll would leave the host thinking the bot is down for up to its whole timeout.
        const int timeout = troubled ? 0 : kPollTimeoutSeconds;
        util::JsonObject params{{"timeout", timeout},
                                {"allowed_updates", util::JsonArray{"message"}}};
        if (offset) params["offset"] = *offset;
        const auto asked = offset;
        outcome =
            co_await Call("getUpdates", std::move(params), std::chrono::seconds(timeout + 10));
        // A poll that outlived the lease (this process was paused): its updates are left
        // unconfirmed for the instance that owns the bot now.
        if (!context_.host->MayAct()) co_return;
        if (outcome.ok) sent = asked;
        if (outcome.ok && !outcome.result.is_array()) {
          outcome.ok = false;
          outcome.trouble = "getUpdates answered something that is not a list of updates";
        }
      }
      if (outcome.cancelled) co_return;
      if (!outcome.ok) {
        if (outcome.trouble.find("webhook is active") != std::string::npos) {
          webhook_deleted = false;  // someone set one meanwhile
        }
        troubled = true;
        Trouble(outcome.trouble);
        const bool go_on = co_await Pause(attempt, outcome.retry_after);
        if (!go_on) co_return;
        continue;
      }
      attempt = 0;
      if (troubled) {
        troubled = false;
        context_.host->OnConnected(account);
        Log(LogLevel::kInfo, "Telegram answers again");
      }
      if (deleting) {
        webhook_deleted = true;
        continue;
      }
      const auto& batch = outcome.result.get_array();
      const auto offset_before = offset;
      for (const util::Json& update : batch) {
        // Confirmed by the next getUpdates, once this batch is with the host.
        if (auto id = ReadUpdateId(update); id && (!offset || *id >= *offset)) offset = *id + 1;
        co_await Deliver(update);
        const bool stopped = co_await IsCancelled();
        if (stopped) co_return;
      }
      if (!batch.empty() && offset == offset_before) {
        // Nothing in the batch could be confirmed: asking again at once would get it again.
        troubled = true;
        Trouble("getUpdates answered updates without a usable update_id");
        const bool go_on = co_await Pause(attempt, 0);
        if (!go_on) co_return;
      }
    }
  }

  asio::awaitable<void> RunWebhook(const std::string& account) {
    const std::string& url = context_.webhook_url;
    if (!url.starts_with("https://")) {
      Trouble(url.empty() ? "webhook mode needs a public https URL (set api.webhook_prefix); "
                            "Telegram only calls https webhooks"
                          : "the webhook URL is not https; Telegram only calls https webhooks");
      co_await WaitUntilCancelled();
      co_return;
    }
    int attempt = 0;
    bool troubled = false;
    for (;;) {
      util::JsonObject params{
          {"url", url}, {"secret_token", secret_}, {"allowed_updates", util::JsonArray{"message"}}};
      Outcome outcome = co_await Call("setWebhook", std::move(params), kCallTimeout);
      if (outcome.cancelled) co_return;
      if (outcome.ok) break;
      troubled = true;
      Trouble(outcome.trouble);
      const bool go_on = co_await Pause(attempt, outcome.retry_after);
      if (!go_on) co_return;
    }
    if (troubled) context_.host->OnConnected(account);
    Log(LogLevel::kInfo, "webhook registered with Telegram");
    // Stop leaves the webhook in place: the next start registers it again with a new secret.
    co_await WaitUntilCancelled();
  }

  // One Update, from getUpdates or the webhook, to the host.
  asio::awaitable<void> Deliver(util::Json update) {
    co_await asio::this_coro::throw_if_cancelled(false);
    const auto id = ReadUpdateId(update);
    if (!id) {
      Log(LogLevel::kWarning, "skipped an update without an integer update_id");
      co_return;
    }
    if (!FirstSighting(*id)) co_return;
    auto decoded = DecodeUpdate(update, Identity());
    if (!decoded) {
      Log(LogLevel::kWarning,
          fmt::format("skipped malformed update {}: {}", *id, decoded.error().message));
      co_return;
    }
    if (!decoded->message) co_return;
    co_await FetchFiles(*decoded);
    const bool cancelled = co_await IsCancelled();
    if (cancelled) co_return;
    RememberName(decoded->message->sender_id, decoded->message->sender_name);
    context_.host->OnMessage(std::move(*decoded->message));
  }

  // Fills the media elements' base64; an element whose bytes cannot be had is dropped.
  asio::awaitable<void> FetchFiles(DecodedUpdate& decoded) {
    auto& chain = decoded.message->chain;
    std::vector<std::size_t> dropped;
    for (const PendingFile& file : decoded.files) {
      auto bytes = co_await Download(file);
      if (!bytes) {
        if (bytes.error().code == ErrorCode::kCancelled) co_return;
        Log(LogLevel::kWarning, fmt::format("skipped the {} of message {}: {}",
                                            domain::ElementTypeName(chain[file.element].type),
                                            decoded.message->message_id, bytes.error().message));
        dropped.push_back(file.element);
        continue;
      }
      chain[file.element].base64 = DataUrl(file.mime_type, *bytes);
    }
    std::sort(dropped.rbegin(), dropped.rend());
    for (std::size_t index : dropped) chain.erase(chain.begin() + static_cast<long>(index));
  }

  asio::awaitable<util::Result<std::string>> Download(const PendingFile& file) {
    auto too_large = [](std::int64_t size) {
      return util::Fail(ErrorCode::kPayloadTooLarge,
                        fmt::format("{} bytes is over the 10 MiB download limit", size));
    };
    if (file.file_size > kMaxDownloadBytes) co_return too_large(file.file_size);
    // Parameters are built first: GCC 12 rejects a braced list inside a co_await expression.
    util::JsonObject params{{"file_id", file.file_id}};
    Outcome got = co_await Call("getFile", std::move(params), kCallTimeout);
    if (!got.ok) co_return tl::unexpected(got.error);
    auto info = DecodeFileInfo(got.result);
    if (!info) co_return tl::unexpected(info.error());
    if (info->file_size > kMaxDownloadBytes) co_return too_large(info->file_size);
    std::string path = info->file_path;
    while (!path.empty() && path.front() == '/') path.erase(path.begin());
    net::HttpRequest request;
    request.method = "GET";
    request.url = base_ + "/file/bot" + token_ + "/" + path;
    request.timeouts.connect = 10s;
    request.timeouts.total = kUploadTimeout;
    request.timeouts.idle = kCallTimeout;
    request.max_response_bytes = static_cast<std::size_t>(kMaxDownloadBytes);
    auto response = co_await context_.http->Send(std::move(request));
    if (!response) {
      co_return util::Fail(response.error().code,
                           "the download failed: " + Scrub(response.error().message));
    }
    if (response->status != 200) {
      co_return util::Fail(ErrorCode::kUpstreamFailed,
                           fmt::format("the download answered HTTP {}", response->status));
    }
    co_return std::move(response->body);
  }

  // One call of a send (a streamed reply's): a MarkdownV2 text Telegram cannot parse is sent
  // again as plain text.
  asio::awaitable<util::Result<util::Json>> RunOne(OutboundCall call) {
    const Upload* upload = call.upload ? &*call.upload : nullptr;
    Outcome outcome = co_await Call(call.method, call.params,
                                    upload != nullptr ? kUploadTimeout : kCallTimeout, upload);
    if (!outcome.ok && outcome.entity_parse_error && call.plain_params) {
      Log(LogLevel::kWarning, "Telegram could not parse a MarkdownV2 text; sent it as plain text");
      outcome = co_await Call(call.method, *call.plain_params, kCallTimeout);
    }
    if (!outcome.ok) co_return tl::unexpected(outcome.error);
    co_return std::move(outcome.result);
  }

  asio::awaitable<void> SendAll(std::shared_ptr<const std::vector<OutboundCall>> calls,
                                std::shared_ptr<common::SendOnce> once) {
    co_await asio::this_coro::throw_if_cancelled(false);
    domain::SendReceipt receipt;
    for (const OutboundCall& call : *calls) {
      const Upload* upload = call.upload ? &*call.upload : nullptr;
      Outcome outcome = co_await Call(call.method, call.params,
                                      upload != nullptr ? kUploadTimeout : kCallTimeout, upload);
      if (!outcome.ok && outcome.entity_parse_error && call.plain_params) {
        Log(LogLevel::kWarning,
            "Telegram could not parse a MarkdownV2 text; sent it as plain text");
        outcome = co_await Call(call.method, *call.plain_params, kCallTimeout);
      }
      if (!outcome.ok) {
        (*once)(tl::unexpected(outcome.error));
        co_return;
      }
      if (auto id = DecodeSentMessageId(outcome.result)) receipt.message_id = *id;
    }
    (*once)(receipt);
  }

  const AdapterContext context_;
  const std::string token_;
  const bool markdown_;
  const bool stream_reply_;  // replies shown while written, by editing one message
  const std::string mode_;
  const bool webhook_mode_;
  const std::string secret_;  // what Telegram must echo in webhook calls; empty when polling
  std::string base_;          // api_base_url without trailing '/'
  const std::shared_ptr<CoroutineGroup> group_;
  std::atomic<bool> stopping_{false};

  std::mutex mu_;
  BotIdentity bot_;                                     // guarded by mu_; from getMe
  std::deque<std::int64_t> recent_;                     // guarded by mu_; oldest first
  std::unordered_set<std::int64_t> recent_set_;         // guarded by mu_; the same ids
  std::unordered_map<std::string, std::string> names_;  // guarded by mu_; user id -> name
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeTelegramAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, telegram::CheckDeliverable>>(
      std::move(context));
}

}  // namespace sb::platforms::telegram
