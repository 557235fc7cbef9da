// The WeChatPad adapter's receiving side: login state and profile, the message socket, reconnects
// with backoff, and text messages handed to the host; sends go out through WeChatPadApi
// (wechatpad_api.cpp).
#include "platforms/wechatpad/wechatpad_adapter.hpp"

#include <fmt/format.h>

#include <boost/asio/this_coro.hpp>
#include <utility>

#include "net/websocket.hpp"
#include "platforms/common/config_reader.hpp"
#include "platforms/common/core_adapter.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/reconnect_loop.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/coroutine_group.hpp"
// Sleep on the injected clock and the cancellation helpers are not Discord-specific; they are
// shared from there until they move to platforms/common.
#include "platforms/common/adapter_core.hpp"
#include "platforms/common/clock_waits.hpp"
#include "platforms/wechatpad/wechatpad_api.hpp"
#include "platforms/wechatpad/wechatpad_codec.hpp"

namespace sb::platforms::wechatpad {
namespace {

namespace asio = boost::asio;
using domain::LogLevel;
using util::ErrorCode;

// LangBot drops frames above 1 M characters; a frame is one message.
constexpr std::size_t kMaxFrameBytes = 4 * 1024 * 1024;
constexpr std::size_t kRecentMessages = 4096;  // new_msg_ids remembered against repeats
constexpr int kMaxFrameComplaints = 10;        // logged per connection; the rest are dropped

bool HasControlCharacters(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7F) return true;
  }
  return false;
}

class Core : public common::AdapterCore<Core> {
 public:
  explicit Core(AdapterContext context)
      : AdapterCore(std::move(context)),
        token_(common::ConfigString(context_.config, "token")),
        configured_wxid_(common::ConfigString(context_.config, "wxid")),
        endpoints_(EndpointsFromConfig(context_.config)),
        api_(context_, token_, endpoints_.http),
        seen_(kRecentMessages) {}

  void Start() {
    StartIfMet({{!token_.empty(),
                 "no token configured: log the account in on WeChatPadPro and paste its token "
                 "(key); generating one with admin_key is not done by this adapter"},
                {!HasControlCharacters(token_),
                 "the token holds control characters (a pasted line break?)"},
                {endpoints_.http.starts_with("http://") || endpoints_.http.starts_with("https://"),
                 "wechatpad_url must be an http:// or https:// URL"},
                {endpoints_.ws.starts_with("ws://") || endpoints_.ws.starts_with("wss://"),
                 "wechatpad_ws must be a ws:// or wss:// URL"},
                {context_.websockets != nullptr,
                 "this server has no WebSocket transport for WeChatPad messages"}},
               [self = shared_from_this()]() { return self->Run(); });
  }

  void Send(domain::OutgoingMessage message, std::string /*reply_to_message_id*/,
            std::function<void(util::Result<domain::SendReceipt>)> done) {
    auto once = common::MakeSendOnce(std::move(done));
    auto self = shared_from_this();
    SpawnSend(once, [self, once, message = std::move(message)]() mutable {
      return self->api_.Deliver(std::move(message), once);
    });
  }

 private:
  std::string Scrub(std::string text) const override { return api_.Scrub(std::move(text)); }

  // Login state and profile. An error marked final (the token or the login refused) ends the
  // adapter's work; any other is retried with backoff.
  asio::awaitable<util::Result<Profile>> SignIn() {
    auto status = co_await api_.Get("/login/GetLoginStatus");
    if (!status) co_return tl::unexpected(status.error());
    if (auto checked = CheckLoginStatus(*status); !checked) {
      co_return tl::unexpected(checked.error());
    }
    auto answer = co_await api_.Get("/user/GetProfile");
    if (!answer) co_return tl::unexpected(answer.error());
    auto profile = DecodeProfile(*answer);
    if (!profile) {
      // LangBot reads the wxid from the profile too; the configured one stands in for it.
      if (configured_wxid_.empty()) co_return tl::unexpected(profile.error());
      Log(LogLevel::kWarning, profile.error().message + "; using the configured wxid");
      co_return Profile{configured_wxid_, ""};
    }
    if (!configured_wxid_.empty() && configured_wxid_ != profile->wxid) {
      Log(LogLevel::kWarning,
          fmt::format("the token's account is {}, not the configured wxid {}; answering as {}",
                      profile->wxid, configured_wxid_, profile->wxid));
    }
    co_return std::move(*profile);
  }

  asio::awaitable<void> Run() {
    co_await asio::this_coro::throw_if_cancelled(false);
    co_await common::RunReconnecting(
        *context_.clock, [this](const std::string& why) { Trouble(why); },
        [this](common::ReconnectBackoff& backoff) { return Connect(backoff); });
  }

  // One connection: sign in, open the message socket, read it until it ends, close it.
  asio::awaitable<common::Attempt> Connect(common::ReconnectBackoff& backoff) {
    using common::Attempt;
    auto profile = co_await SignIn();
    if (!profile) {
      if (profile.error().code == ErrorCode::kCancelled) co_return Attempt::Cancelled();
      if (profile.error().final) co_return Attempt::Fatal(profile.error().message);
      co_return Attempt::Retry("cannot reach WeChatPad: " + profile.error().message);
    }
    net::WebSocketConnectRequest request;
    request.url = KeyedUrl(endpoints_.ws, "/GetSyncMsg", token_);
    request.limits.max_message_bytes = kMaxFrameBytes;
    auto conn = co_await context_.websockets->Connect(std::move(request));
    if (!conn) {
      if (conn.error().code == ErrorCode::kCancelled) co_return Attempt::Cancelled();
      co_return Attempt::Retry("cannot open the WeChatPad message socket: " +
                               api_.Scrub(conn.error().message));
    }
    backoff.Connected(context_.clock->Now());
    context_.host->OnConnected(profile->wxid);
    Log(LogLevel::kInfo,
        fmt::format("connected to WeChatPad as {} ({})",
                    profile->nickname.empty() ? profile->wxid : profile->nickname, profile->wxid));
    const std::string why = co_await ReadLoop(**conn, profile->wxid);
    if (why.empty()) {
      co_await asio::this_coro::reset_cancellation_state();
      co_await (*conn)->Close(1000, "the bot stopped");
      co_return Attempt::Cancelled();
    }
    co_await (*conn)->Close(1000, "reconnecting");
    co_return Attempt::Retry(why);
  }

  // Reads frames until the socket ends: the reason, or "" when cancelled.
  asio::awaitable<std::string> ReadLoop(net::WebSocketConnection& conn, const std::string& wxid) {
    int complaints = 0;
    for (;;) {
      auto message = co_await conn.Read();
      if (!message) {
        if (message.error().code == ErrorCode::kCancelled) co_return std::string();
        const net::WebSocketClose close = conn.close_info();
        co_return fmt::format("the WeChatPad message socket was lost (close {}{}{})", close.code,
                              close.reason.empty() ? "" : ": ", close.reason);
      }
      auto frame = DecodeSyncMessage(message->data, wxid);
      if (!frame) {
        if (++complaints <= kMaxFrameComplaints) {
          Log(LogLevel::kWarning, "skipped a malformed WeChatPad frame: " + frame.error().message);
        }
        continue;
      }
      if (!frame->skipped.empty() && ++complaints <= kMaxFrameComplaints) {
        Log(LogLevel::kInfo, frame->skipped);
      }
      if (!frame->message) continue;
      if (!seen_.FirstSighting(frame->dedupe_key)) continue;
      context_.host->OnMessage(std::move(*frame->message));
    }
  }

  const std::string token_;
  const std::string configured_wxid_;
  const Endpoints endpoints_;
  WeChatPadApi api_;
  common::RecentIds seen_;
};

}  // namespace

std::unique_ptr<PlatformAdapter> MakeWeChatPadAdapter(AdapterContext context) {
  return std::make_unique<common::CoreAdapter<Core, CheckDeliverable>>(std::move(context));
}

}  // namespace sb::platforms::wechatpad
