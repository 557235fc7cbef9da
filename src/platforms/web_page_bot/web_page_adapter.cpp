#include "platforms/web_page_bot/web_page_adapter.hpp"

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/web_page_bot/web_page_assets.hpp"
#include "platforms/web_page_bot/web_page_codec.hpp"
#include "platforms/web_page_bot/web_page_visitors.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::web_page {
namespace {

namespace asio = boost::asio;
using domain::LogLevel;
using util::ErrorCode;

constexpr std::string_view kDefaultVerifyBase = "https://challenges.cloudflare.com";
constexpr std::size_t kMaxSessionBody = 4096;
// How long a verified visitor may open sockets without another Turnstile check.
constexpr std::int64_t kTicketSeconds = 3600;
constexpr util::Duration kSweepEvery = std::chrono::seconds(30);
constexpr int kMaxVerifying = 32;  // siteverify calls under way at once

// Close codes of RFC 6455 §7.4.1.
constexpr int kGoingAway = 1001;
constexpr int kPolicy = 1008;
constexpr int kTooBig = 1009;
constexpr int kNormal = 1000;

WebhookAnswer Json(int status, util::JsonObject body) {
  return {status, "application/json", util::SerializeJson(body), {}};
}
WebhookAnswer Message(int status, std::string_view message) {
  return Json(status, util::JsonObject{{"message", message}});
}

// The first characters of a visitor id: enough to tell visitors apart in the log.
std::string Short(std::string_view visitor) { return std::string(visitor.substr(0, 8)); }

std::string QueryValue(const WebhookCall& call, std::string_view key) {
  for (const auto& [k, v] : call.query) {
    if (k == key) return v;
  }
  return {};
}

class Core : public std::enable_shared_from_this<Core> {
 public:
  explicit Core(AdapterContext context)
      : context_(std::move(context)),
        settings_{common::ConfigString(context_.config, "title", "Chat"),
                  common::ConfigString(context_.config, "language", "en_US"),
                  common::ConfigString(context_.config, "turnstile_site_key")},
        secret_(common::ConfigString(context_.config, "turnstile_secret_key")),
        verify_base_(common::ConfigBaseUrl(context_.config, "api_base_url", kDefaultVerifyBase)),
        // Tickets are signed with a key derived from the secret: they survive a restart and die
        // with a new secret.
        ticket_key_(secret_.empty() ? std::string()
                                    : util::HmacSha256(secret_, "switchboard web page ticket")),
        message_prefix_(util::RandomUrlSafe(6)),
        group_(CoroutineGroup::Make(context_.executor)),
        visitors_(Limits{}) {
    if (settings_.title.empty()) settings_.title = "Chat";
    // The widget renders the challenge only when the server can check its answer.
    if (secret_.empty()) settings_.site_key.clear();
  }

  void Start() {
    if (!secret_.empty() && settings_.site_key.empty()) {
      context_.host->OnTrouble(
          "turnstile_secret_key is set but turnstile_site_key is empty: no visitor can pass the "
          "check");
      return;
    }
    ScheduleSweep();
    context_.host->OnConnected("");
    Log(LogLevel::kInfo,
        secret_.empty() ? "the chat widget is served; visitors connect without a check"
                        : "the chat widget is served; visitors pass Cloudflare Turnstile first");
  }

  void Stop(std::function<void()> stopped) {
    if (!Halt()) return;
    group_->Close(std::move(stopped));
  }

  void Abandon() {
    if (!Halt()) return;
    group_->Close(nullptr);
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    (void)reply_to_message_id;
    if (stopping_) return done(util::Fail(ErrorCode::kCancelled, "the bot is stopping"));
    const std::string id = NextMessageId("b");
    auto entry = MessageEntry("bot", id, EncodeElements(message.chain), UnixNow());
    const std::string frame = MessageFrame(entry);
    std::vector<std::shared_ptr<domain::PlatformSocket>> sockets;
    bool known = false;
    {
      std::lock_guard lock(mu_);
      known = visitors_.Known(message.target_id);
      // Kept for the visitor's next connection too: a reply that finds every tab closed is shown
      // when the visitor comes back.
      if (known) visitors_.Record(message.target_id, std::move(entry), context_.clock->Now());
      sockets = visitors_.SocketsOf(message.target_id);
    }
    if (!known) {
      return done(util::Fail(ErrorCode::kUpstreamFailed,
                             "this visitor has no chat with the bot (never connected, or forgotten "
                             "since)"));
    }
    for (const auto& socket : sockets) socket->SendText(frame);
    done(domain::SendReceipt{id});
  }

  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    const std::string& path = call.path;
    if (call.method == "GET" && path == "/widget.js") {
      WebhookAnswer a{200, "application/javascript; charset=utf-8", RenderWidgetScript(settings_)};
      // Sites include it on every page: browsers may keep it a few minutes.
      a.headers = {{"Cache-Control", "public, max-age=300"}, {"X-Content-Type-Options", "nosniff"}};
      return answer(std::move(a));
    }
    if (call.method == "GET" && (path.empty() || path == "/" || path == "/chat")) {
      // /bots/<uuid> and /bots/<uuid>/ arrive alike, so only /chat can name the script
      // relatively (and so keeps working behind a proxy that adds a path prefix).
      const std::string script =
          path == "/chat" ? std::string("widget.js") : "/bots/" + context_.bot_uuid + "/widget.js";
      WebhookAnswer a{200, "text/html; charset=utf-8", RenderChatPage(settings_, script)};
      a.headers = {{"Cache-Control", "public, max-age=300"},
                   {"Content-Security-Policy", ChatPagePolicy(!secret_.empty())},
                   {"X-Content-Type-Options", "nosniff"}};
      return answer(std::move(a));
    }
    if (path == "/session") {
      if (call.method != "POST") return answer(Message(405, "use POST"));
      return StartSession(std::move(call), std::move(answer));
    }
    if (path == "/ws") return answer(Message(400, "this URL takes a WebSocket upgrade"));
    answer(Message(404, "no such page"));
  }

  util::Result<domain::PlatformSocketHandlers> AcceptSocket(
      WebhookCall call, std::shared_ptr<domain::PlatformSocket> socket) {
    if (call.path != "/ws") {
      return util::Fail(ErrorCode::kNotFound, "the chat socket is at /bots/<uuid>/ws");
    }
    const std::string visitor = QueryValue(call, "visitor");
    if (!IsVisitorId(visitor)) {
      return util::Fail(ErrorCode::kInvalidArgument,
                        "visitor must be a random UUID (version 4, lower case)");
    }
    if (!ticket_key_.empty() &&
        !CheckTicket(ticket_key_, visitor, QueryValue(call, "ticket"), UnixNow())) {
      Log(LogLevel::kWarning, fmt::format("refused a chat socket of visitor {}: no valid "
                                          "Turnstile ticket",
                                          Short(visitor)));
      return util::Fail(ErrorCode::kPermissionDenied,
                        "pass the Turnstile check first (POST session)");
    }
    std::uint64_t id = 0;
    std::size_t open = 0;
    std::string ready;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return util::Fail(ErrorCode::kUnavailable, "the bot is stopping");
      auto attached = visitors_.Attach(visitor, call.remote_address, socket, context_.clock->Now());
      if (!attached) {
        Log(LogLevel::kWarning, fmt::format("refused a chat socket of visitor {}: {}",
                                            Short(visitor), attached.error().message));
        return tl::unexpected(attached.error());
      }
      id = *attached;
      open = visitors_.SocketCount();
      ready = ReadyFrame(visitor, visitors_.History(visitor));
    }
    socket->SendText(std::move(ready));
    Log(LogLevel::kInfo,
        fmt::format("visitor {} connected ({} chat sockets open)", Short(visitor), open));
    auto self = shared_from_this();
    domain::PlatformSocketHandlers handlers;
    handlers.on_text = [self, visitor, id, socket](std::string text) {
      self->OnFrame(visitor, id, *socket, std::move(text));
    };
    handlers.on_close = [self, visitor, id] { self->OnClosed(visitor, id); };
    return handlers;
  }

 private:
  // Marks the adapter stopping and closes every socket; false when it already was. After it, no
  // host call starts (the gate waits for one under way).
  bool Halt() {
    std::vector<std::shared_ptr<domain::PlatformSocket>> sockets;
    {
      std::unique_lock gate(gate_);
      if (stopping_.exchange(true)) return false;
    }
    {
      std::lock_guard lock(mu_);
      sockets = visitors_.AllSockets();
      sweep_.Cancel();
    }
    for (const auto& s : sockets) s->Close(kGoingAway, "the bot stopped");
    return true;
  }

  // Runs `call` with the host unless the adapter is stopping.
  template <class F>
  void WithHost(F&& call) {
    std::shared_lock gate(gate_);
    if (stopping_) return;
    call(*context_.host);
  }

  void Log(LogLevel level, std::string text) {
    WithHost([&](AdapterHost& host) { host.Log(level, std::move(text)); });
  }

  std::int64_t UnixNow() const { return util::ToUnixSeconds(context_.clock->Now()); }

  std::string NextMessageId(std::string_view kind) {
    return fmt::format("{}{}-{}", kind, message_prefix_, ++message_counter_);
  }

  void OnFrame(const std::string& visitor, std::uint64_t id, domain::PlatformSocket& socket,
               std::string text) {
    if (text.size() > kMaxFrameBytes) {
      Log(LogLevel::kWarning, fmt::format("closed the socket of visitor {}: a {}-byte frame",
                                          Short(visitor), text.size()));
      return socket.Close(kTooBig, "frame too big");
    }
    auto frame = DecodeClientFrame(text);
    if (!frame) {
      std::lock_guard lock(mu_);
      visitors_.Touch(visitor, id, context_.clock->Now());
      const bool too_long = frame.error().code == ErrorCode::kPayloadTooLarge;
      socket.SendText(ErrorFrame(too_long ? "too_large" : "bad_frame", frame.error().message));
      return;
    }
    if (frame->kind == ClientFrame::Kind::kPing) {
      {
        std::lock_guard lock(mu_);
        visitors_.Touch(visitor, id, context_.clock->Now());
      }
      return socket.SendText(PongFrame());
    }
    const std::string message_id = NextMessageId("v");
    Admission admission;
    {
      std::lock_guard lock(mu_);
      admission = visitors_.Admit(visitor, id, context_.clock->Now());
      if (admission == Admission::kAccepted) {
        util::JsonArray elements{util::JsonObject{{"type", "text"}, {"text", frame->text}}};
        visitors_.Record(visitor,
                         MessageEntry("visitor", message_id, std::move(elements), UnixNow()),
                         context_.clock->Now());
      }
    }
    if (admission == Admission::kRefused) {
      return socket.SendText(ErrorFrame("rate_limited", "too many messages; wait a moment"));
    }
    if (admission == Admission::kClose) {
      Log(LogLevel::kWarning,
          fmt::format("closed the socket of visitor {}: kept sending too fast", Short(visitor)));
      return socket.Close(kPolicy, "too many messages");
    }
    WithHost([&](AdapterHost& host) {
      host.OnMessage(ToReceived(visitor, std::move(frame->text), message_id));
    });
  }

  void OnClosed(const std::string& visitor, std::uint64_t id) {
    std::size_t open = 0;
    {
      std::lock_guard lock(mu_);
      visitors_.Detach(visitor, id);
      open = visitors_.SocketCount();
    }
    Log(LogLevel::kInfo,
        fmt::format("visitor {} disconnected ({} chat sockets open)", Short(visitor), open));
  }

  // Closes sockets idle past the bound, every kSweepEvery, until the adapter stops.
  void ScheduleSweep() {
    std::weak_ptr<Core> weak = weak_from_this();
    std::lock_guard lock(mu_);
    if (stopping_) return;
    sweep_ = context_.clock->After(kSweepEvery, [weak] {
      auto self = weak.lock();
      if (!self || self->stopping_) return;
      std::vector<std::shared_ptr<domain::PlatformSocket>> idle;
      {
        std::lock_guard lock(self->mu_);
        idle = self->visitors_.Idle(self->context_.clock->Now());
      }
      for (const auto& s : idle) s->Close(kNormal, "idle");
      self->ScheduleSweep();
    });
  }

  // POST session {"visitor","token"}: checks the Turnstile token with siteverify and answers a
  // ticket for the visitor's sockets.
  void StartSession(WebhookCall call, std::function<void(WebhookAnswer)> answer) {
    if (secret_.empty()) return answer(Json(200, util::JsonObject{{"ticket", ""}}));
    if (call.body.size() > kMaxSessionBody) return answer(Message(413, "the body is too large"));
    auto parsed = util::ParseJson(call.body);
    const util::JsonObject* body = parsed ? parsed->if_object() : nullptr;
    if (body == nullptr) return answer(Message(400, "the body is a JSON object"));
    const std::string visitor(common::StringOr(*body, "visitor"));
    const std::string token(common::StringOr(*body, "token"));
    if (!IsVisitorId(visitor)) return answer(Message(400, "visitor must be a random UUID"));
    if (token.empty() || token.size() > 2048) {
      Log(LogLevel::kWarning,
          fmt::format("refused visitor {}: no Turnstile token", Short(visitor)));
      return answer(Message(403, "a Turnstile token is needed"));
    }
    // Each check is a call to Cloudflare: a flood of them is cut off here, not passed on.
    if (verifying_.fetch_add(1) >= kMaxVerifying) {
      --verifying_;
      return answer(Message(503, "too many checks at once; try again"));
    }
    auto self = shared_from_this();
    const bool started = group_->Spawn([self, visitor, token, ip = std::move(call.remote_address),
                                        answer]() mutable {
      return self->Verify(std::move(visitor), std::move(token), std::move(ip), std::move(answer));
    });
    if (!started) {
      --verifying_;
      answer(Message(503, "the bot is stopping"));
    }
  }

  asio::awaitable<void> Verify(std::string visitor, std::string token, std::string ip,
                               std::function<void(WebhookAnswer)> answer) {
    struct Done {
      std::atomic<int>& count;
      ~Done() { --count; }
    } done{verifying_};
    net::HttpRequest request;
    request.method = "POST";
    request.url = verify_base_ + "/turnstile/v0/siteverify";
    request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    request.body = SiteverifyBody(secret_, token, ip);
    request.timeouts.connect = std::chrono::seconds(5);
    request.timeouts.total = std::chrono::seconds(10);
    request.max_response_bytes = 64 * 1024;
    auto response = co_await context_.http->Send(std::move(request));
    if (!response) {
      Log(LogLevel::kError, "Turnstile siteverify failed: " + response.error().message);
      co_return answer(Message(502, "the check could not be verified; try again"));
    }
    auto result = response->status == 200
                      ? ParseSiteverify(response->body)
                      : util::Result<SiteverifyResult>(util::Fail(
                            ErrorCode::kUpstreamFailed,
                            fmt::format("siteverify answered HTTP {}", response->status)));
    if (!result) {
      Log(LogLevel::kError, "Turnstile siteverify failed: " + result.error().message);
      co_return answer(Message(502, "the check could not be verified; try again"));
    }
    if (!result->success) {
      std::string codes;
      for (const auto& c : result->error_codes) codes += (codes.empty() ? "" : ", ") + c;
      Log(LogLevel::kWarning, fmt::format("Turnstile refused visitor {} ({})", Short(visitor),
                                          codes.empty() ? "no reason given" : codes));
      util::JsonArray list;
      for (const auto& c : result->error_codes) list.emplace_back(c);
      co_return answer(Json(403, util::JsonObject{{"message", "the check was not passed"},
                                                  {"error-codes", std::move(list)}}));
    }
    Log(LogLevel::kInfo, fmt::format("visitor {} passed the Turnstile check", Short(visitor)));
    co_return answer(Json(200, util::JsonObject{{"ticket", MakeTicket(ticket_key_, visitor,
                                                                      UnixNow() + kTicketSeconds)},
                                                {"expires_in", kTicketSeconds}}));
  }

  const AdapterContext context_;
  WidgetSettings settings_;
  const std::string secret_;
  const std::string verify_base_;
  const std::string ticket_key_;
  const std::string message_prefix_;
  const std::shared_ptr<CoroutineGroup> group_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> message_counter_{0};
  std::atomic<int> verifying_{0};  // siteverify calls under way
  std::shared_mutex gate_;         // held shared around host calls, exclusively to stop them

  std::mutex mu_;  // guards below
  VisitorTable visitors_;
  util::TimerHandle sweep_;
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeWebPageAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::web_page
