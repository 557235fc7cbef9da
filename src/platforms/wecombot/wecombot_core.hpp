// The WeCom AI bot adapter's shared state and work, split by transport: lifecycle, Send and
// message delivery (wecombot_adapter.cpp), the WebSocket long connection (wecombot_socket.cpp) and
// the webhook callbacks with their reply streams (wecombot_webhook.cpp). Internal to the adapter.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "domain/bot_log.hpp"
#include "net/websocket.hpp"
#include "platforms/adapter_context.hpp"
#include "platforms/common/recent_ids.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/common/wake_signal.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/platform_adapter.hpp"
#include "platforms/wecombot/wecombot_codec.hpp"
#include "platforms/wecombot/wecombot_streams.hpp"

namespace sb::platforms::wecombot {

struct Settings {
  std::string bot_id;
  std::string secret;
  bool webhook = false;
  std::string token;
  std::string encoding_aes_key;
  std::string ws_url;
  util::Duration poll_timeout{500};
  util::Duration heartbeat{30'000};
  StreamOptions streams;
  bool stream_reply = false;  // enable-stream-reply: long-connection replies stream as written
};
Settings ReadSettings(const util::JsonObject& config);

// A frame sent on the long connection and waiting for its acknowledgement.
struct AckWait {
  common::WakeSignal turn;   // the previous frame with the same req_id is done
  common::WakeSignal acked;  // `ack` is set, or the link ended
  std::optional<Frame> ack;
};

// One open long connection, shared by its read loop, its heartbeat loop and the sends.
struct Link {
  std::shared_ptr<net::WebSocketConnection> conn;
  std::atomic<int> missed_pings{0};
  std::mutex mu;
  bool ended = false;  // guarded by mu
  // Guarded by mu. Frames on one req_id go out one at a time (WeCom acknowledges each and a
  // reply's frames reuse the callback's req_id), so each req_id has a queue; its front is sent.
  std::unordered_map<std::string, std::deque<std::shared_ptr<AckWait>>> acks;
  std::size_t pending = 0;  // guarded by mu
};

// Where a reply to a received message goes on the long connection.
struct ReplyTarget {
  std::string req_id;  // the callback's
  std::string stream_id;
  util::TimePoint received{};
  bool used = false;  // the stream was finished by a reply: later ones go by aibot_send_msg
};

class Core : public std::enable_shared_from_this<Core> {
 public:
  explicit Core(AdapterContext context);

  void Start();
  void Stop(std::function<void()> stopped);
  void Abandon();
  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done);
  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer);
  // With enable-stream-reply: the reply is shown while written, as stream frames on the
  // callback's req_id (long connection) or in the polled stream's refresh answers (webhook).
  std::shared_ptr<ReplyStream> BeginStream(domain::TargetType chat_type, std::string chat_id,
                                           std::string reply_to_message_id);

 private:
  friend class SocketReplyStream;
  // ---- shared (wecombot_adapter.cpp) ----
  std::string Scrub(std::string text) const;
  void Log(domain::LogLevel level, std::string text);
  void Trouble(const std::string& why);
  util::TimePoint Now() const { return context_.clock->Now(); }
  std::int64_t NowMs() const;
  // Downloads and decrypts the callback's images, then hands the message to the host.
  boost::asio::awaitable<void> Deliver(Callback callback);
  boost::asio::awaitable<bool> FetchImage(domain::MessageElement& element,
                                          const PendingImage& image);
  // Pauses `delay` on the clock; false when cancelled.
  boost::asio::awaitable<bool> Pause(util::Duration delay);
  // A feedback_event callback (either transport): decoded and handed to the host, or logged
  // and dropped when malformed.
  void ReportFeedback(const util::Json& body);

  // ---- long connection (wecombot_socket.cpp) ----
  struct Ended {
    std::string why;
    bool cancelled = false;
    bool fatal = false;      // retrying cannot help (refused subscription, displaced)
    bool connected = false;  // the subscription had been acknowledged
  };
  boost::asio::awaitable<void> RunSocket();
  boost::asio::awaitable<Ended> RunLink(std::shared_ptr<Link> link);
  boost::asio::awaitable<Ended> ReadLoop(std::shared_ptr<Link> link);
  boost::asio::awaitable<Ended> HeartbeatLoop(std::shared_ptr<Link> link);
  // Returns how the connection ends when the frame ends it.
  std::optional<Ended> OnFrame(const std::shared_ptr<Link>& link, Frame frame);
  void EndLink(const std::shared_ptr<Link>& link);
  std::shared_ptr<Link> CurrentLink();
  // Sends `cmd` and waits for its acknowledgement (serialized per req_id). The ack is returned
  // whatever its errcode; kUpstreamTimeout / kUpstreamFailed / kUnavailable when none came.
  boost::asio::awaitable<util::Result<Frame>> Command(std::shared_ptr<Link> link, std::string cmd,
                                                      std::string req_id, util::JsonObject body);
  // `taken`: the reply target a streamed reply already took (its stream is finished), else the
  // message's target is looked up.
  boost::asio::awaitable<void> SocketSend(domain::OutgoingMessage message,
                                          std::string reply_to_message_id,
                                          std::shared_ptr<common::SendOnce> once,
                                          std::optional<ReplyTarget> taken = std::nullopt);
  void RememberReplyTarget(const std::string& msgid, ReplyTarget target);
  std::optional<ReplyTarget> TakeReplyTarget(const std::string& msgid);

  // ---- webhook (wecombot_webhook.cpp) ----
  void HandleVerification(const WebhookCall& call,
                          const std::function<void(WebhookAnswer)>& answer);
  void HandleCallback(const WebhookCall& call, const std::function<void(WebhookAnswer)>& answer);
  void HandleRefresh(const std::string& stream_id, std::string nonce,
                     std::function<void(WebhookAnswer)> answer);
  WebhookAnswer Encrypted(const util::JsonObject& reply, std::string_view nonce);
  void WebhookSend(domain::OutgoingMessage message, const std::string& reply_to_message_id,
                   std::shared_ptr<common::SendOnce> once);
  // A streamed reply in webhook mode: the text so far goes into the message's polled stream.
  std::shared_ptr<ReplyStream> WebhookStream(std::string msgid);

  const AdapterContext context_;
  const Settings settings_;
  std::string aes_key_;  // the 32 bytes of EncodingAESKey; empty when not configured
  const std::shared_ptr<CoroutineGroup> group_;
  std::atomic<bool> stopping_{false};
  common::RecentIds seen_;  // msgids handed on (redeliveries are answered once)
  ReplyStreams streams_;

  std::mutex mu_;
  std::shared_ptr<Link> link_;                                  // guarded by mu_; when subscribed
  std::unordered_map<std::string, ReplyTarget> reply_targets_;  // guarded by mu_; by msgid
  std::deque<std::string> reply_order_;                         // guarded by mu_; oldest first
};

}  // namespace sb::platforms::wecombot
