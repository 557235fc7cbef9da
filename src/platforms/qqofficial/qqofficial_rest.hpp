// The QQ official bot API as the adapter calls it: the app access token (fetched from the token
// host, renewed in its last minute, fetched again and the call repeated once when QQ says it
// expired), authorised calls with `Authorization: QQBot <token>` and the 429 policy, GET /gateway,
// and a Send's calls (text, and media through the files API). Internal to platforms/qqofficial.
//   QqRest rest(context, appid, secret, "https://api.sgroup.qq.com", "https://bots.qq.com");
//   auto token = co_await rest.Token();                 // for IDENTIFY / RESUME
//   co_await rest.SendAll(route, target, parts, anchor, once);
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/http_message.hpp"
#include "platforms/adapter_context.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/platform_adapter.hpp"
#include "platforms/qqofficial/qqofficial_codec.hpp"

namespace sb::platforms::qqofficial {

// The received message a reply answers: its msg_id and the msg_seq counter QQ wants increased
// for every passive reply to it. Shared by the sends that use it; thread-safe.
struct ReplyAnchor {
  std::string msg_id;
  std::atomic<int> last_seq{0};
  int NextSeq() { return ++last_seq; }
};

class QqRest {
 public:
  // `context` outlives this object (its owner holds both). `token_base` serves
  // /app/getAppAccessToken, `api_base` everything else.
  QqRest(const AdapterContext& context, std::string appid, std::string secret, std::string api_base,
         std::string token_base);

  // `text` with the secret and the access token replaced, for anything logged or reported.
  std::string Scrub(std::string text) const;

  // The app access token: the cached one while it has more than a minute left (QQ hands out a
  // new one only in its last 60 s), else a new one; `renew` forces a new one. The error is
  // `final` when QQ refused the appid / secret.
  boost::asio::awaitable<util::Result<std::string>> Token(bool renew = false);

  // An authorised call to api_base + path with a JSON body. A 401 / code 11244 answer (the token
  // expired) fetches a new token and repeats the call once. Returns the last response (any
  // status) or the transport's or the token's error.
  boost::asio::awaitable<util::Result<net::HttpResponse>> Call(std::string method, std::string path,
                                                               std::string body,
                                                               bool upload = false);

  // GET /gateway's WebSocket URL.
  boost::asio::awaitable<util::Result<std::string>> GatewayUrl();

  // Posts `parts` in order to `target` on `route`, each a passive reply to `anchor` when there is
  // one (msg_id and the next msg_seq), else a proactive message; finishes `once` with the last
  // message id, or with the first error (QQ's reason, never a secret).
  boost::asio::awaitable<void> SendAll(Route route, std::string target,
                                       std::shared_ptr<const std::vector<Part>> parts,
                                       std::shared_ptr<ReplyAnchor> anchor,
                                       std::shared_ptr<common::SendOnce> once);

 private:
  boost::asio::awaitable<util::Result<std::string>> FetchToken();
  util::Error Refused(std::string_view what, const util::Result<net::HttpResponse>& response);

  const AdapterContext& context_;
  const std::string appid_;
  const std::string secret_;
  const std::string api_base_;
  const std::string token_base_;

  mutable std::mutex mu_;
  std::string token_;               // guarded by mu_
  util::TimePoint token_expiry_{};  // guarded by mu_
};

}  // namespace sb::platforms::qqofficial
