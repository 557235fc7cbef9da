// The DingTalk OpenAPI calls of the adapter (api.dingtalk.com or the configured `api_base_url`):
// the Stream-mode ticket, the access token from /v1.0/oauth2/accessToken, cached and renewed 5
// minutes before it expires, fetched again and the call repeated once when DingTalk rejects it;
// robot sends; media downloads; and posts to a message's session webhook (its URL is the
// credential).
//   DingTalkOpenApi api(http, clock, base, client_id, client_secret);
//   auto connection = co_await api.OpenConnection();    // {endpoint, ticket}
//   auto response = co_await api.Post("/v1.0/robot/groupMessages/send", body);
//   auto image = co_await api.DownloadImage(download_code, robot_code);  // a data: URL
#pragma once

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "net/http_client.hpp"
#include "platforms/dingtalk/dingtalk_codec.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::platforms::dingtalk {

// Thread-safe.
class DingTalkOpenApi {
 public:
  // `http` and `clock` outlive this object.
  DingTalkOpenApi(std::shared_ptr<net::HttpClient> http, const util::Clock& clock, std::string base,
                  std::string client_id, std::string client_secret);

  // POST /v1.0/gateway/connections/open with the client id and secret: a Stream-mode endpoint
  // and a ticket for one connection. kUpstreamAuth, marked final, when DingTalk refused the
  // credentials (any 4xx but 429: asking again with the same ones cannot help); the transport's
  // error or kUpstreamFailed otherwise.
  boost::asio::awaitable<util::Result<Connection>> OpenConnection();

  // POSTs `json_body` to base + `path` with `x-acs-dingtalk-access-token`. A 429 is waited out
  // (common::SendWithRetry); a rejected token is fetched again and the call repeated once.
  // Fails like the token fetch (kUpstreamAuth when DingTalk refuses the credentials) or the
  // transport; any other answer is returned for the caller to judge.
  boost::asio::awaitable<util::Result<net::HttpResponse>> Post(std::string path,
                                                               std::string json_body);

  // POSTs `json_body` to a message's session webhook (an http(s) URL; no token), bounded to
  // 64 KiB of answer and 15 s.
  boost::asio::awaitable<util::Result<net::HttpResponse>> PostWebhook(std::string url,
                                                                      std::string json_body);

  // The (temporary) http(s) downloadUrl of a message's downloadCode, from
  // /v1.0/robot/messageFiles/download. kUpstreamFailed when DingTalk names none.
  boost::asio::awaitable<util::Result<std::string>> DownloadUrl(std::string download_code,
                                                                std::string robot_code);

  // The image behind a message's downloadCode as a `data:<mime>;base64,...` URL: DownloadUrl,
  // then a GET of at most 10 MiB. kUpstreamFailed naming the step that failed.
  boost::asio::awaitable<util::Result<std::string>> DownloadImage(std::string download_code,
                                                                  std::string robot_code);

  // `text` with the client secret and the current access token masked, for log lines.
  std::string Scrub(std::string text) const;

 private:
  // The cached token, or a new one when there is none, it is due, or `stale` names it.
  boost::asio::awaitable<util::Result<std::string>> Token(std::string stale);

  const std::shared_ptr<net::HttpClient> http_;
  const util::Clock& clock_;
  const std::string base_;
  const std::string client_id_;
  const std::string client_secret_;

  mutable std::mutex mu_;
  std::string token_;              // guarded by mu_
  util::TimePoint renew_after_{};  // guarded by mu_
};

}  // namespace sb::platforms::dingtalk
