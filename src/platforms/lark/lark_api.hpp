// The Lark Open API as the adapter calls it: the tenant access token (fetched, cached, renewed
// before it runs out, refetched once when a call says it is invalid), bot info, the
// long-connection endpoint, sending and replying, image upload and message resources. Internal to
// platforms/lark; the codec (lark_codec.hpp) builds and reads the bodies.
//   LarkApi api(context, app_id, app_secret, base);
//   auto info = co_await api.GetBotInfo();
//   auto id = co_await api.Send(domain::TargetType::kPerson, open_id, "", part_type, content);
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

#include "net/http_client.hpp"
#include "platforms/adapter_context.hpp"
#include "platforms/lark/lark_codec.hpp"

namespace sb::platforms::lark {

// Media bytes fetched from Lark, with their content type.
struct Media {
  std::string bytes;
  std::string mime;
};

// Thread-safe.
class LarkApi {
 public:
  // `context` outlives this object (its owner holds both).
  LarkApi(const AdapterContext& context, std::string app_id, std::string app_secret,
          std::string base);

  // `text` with the app secret and the current token replaced, for anything logged or reported.
  std::string Scrub(std::string text) const;

  // GET /open-apis/bot/v3/info. An error marked `final` must not be retried (credentials refused).
  boost::asio::awaitable<util::Result<BotInfo>> GetBotInfo();

  // POST {base}/callback/ws/endpoint {"AppID","AppSecret"}; `final` errors as DecodeWsEndpoint.
  boost::asio::awaitable<util::Result<WsEndpoint>> GetWsEndpoint();

  // One message: a reply to `reply_to` when it is not empty, else a new message to the person
  // (receive_id_type=open_id) or group (chat_id). `uuid` makes repeats of it idempotent for 1 h.
  // Returns the sent message's id. kUpstreamFailed with Lark's code and msg when refused,
  // kUpstreamRateLimited for its rate limit.
  boost::asio::awaitable<util::Result<std::string>> Send(
      domain::TargetType type, std::string_view target, std::string_view reply_to,
      const std::string& msg_type, const std::string& content, std::string_view uuid);

  // PATCH /open-apis/im/v1/messages/{id} with a card's content (a card the bot sent, marked
  // update_multi). Errors as Send's.
  boost::asio::awaitable<util::Result<void>> PatchCard(std::string_view message_id,
                                                       const std::string& content);

  // GET /open-apis/im/v1/messages/{id}: what a reply quotes. Errors as Send's.
  boost::asio::awaitable<util::Result<QuotedMessage>> GetQuoted(std::string_view message_id);

  // DELETE /open-apis/im/v1/messages/{id} (recalls a message the bot sent).
  boost::asio::awaitable<util::Result<void>> Recall(std::string_view message_id);

  // POST /open-apis/im/v1/images (multipart) -> image_key.
  boost::asio::awaitable<util::Result<std::string>> UploadImage(std::string bytes);

  // GET /open-apis/im/v1/messages/{id}/resources/{key}?type=image, at most `max_bytes`.
  boost::asio::awaitable<util::Result<Media>> FetchResource(std::string_view message_id,
                                                            std::string_view key,
                                                            std::size_t max_bytes);

  // An image an Image element names by url (no token sent), at most `max_bytes`.
  boost::asio::awaitable<util::Result<Media>> FetchUrl(std::string url, std::size_t max_bytes);

 private:
  struct Answer {
    int status = 0;
    ApiAnswer api;
    net::HttpResponse raw;
  };

  // The cached token, or a new one when none is held, it is due for renewal, or `refresh`.
  boost::asio::awaitable<util::Result<std::string>> Token(bool refresh);
  // A call with the token; a token error refetches it and repeats the call once.
  boost::asio::awaitable<util::Result<Answer>> Call(std::string method, std::string path,
                                                    std::string body, std::string content_type,
                                                    std::size_t max_bytes = 1 << 20,
                                                    bool json_answer = true);
  util::Error Refused(std::string_view what, const Answer& answer) const;

  const AdapterContext& context_;
  const std::string app_id_;
  const std::string app_secret_;
  const std::string base_;

  mutable std::mutex mu_;
  std::string token_;           // guarded by mu_
  util::TimePoint renew_at_{};  // guarded by mu_
};

}  // namespace sb::platforms::lark
