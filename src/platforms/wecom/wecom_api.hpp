// WeCom's server API as both WeCom adapters call it (internal app and customer service share the
// corp's `/cgi-bin` API): the access token from /gettoken, cached until shortly before it expires
// and fetched again once when WeCom calls it invalid or expired (errcode 40014 / 42001); JSON calls
// whose answer is {errcode, errmsg, ...}; media upload and download, bounded.
//   WeComApi api(http, clock, base, corp_id, secret);
//   auto answer = co_await api.PostJson("/message/send", body, "message/send");
//   auto media_id = co_await api.Upload("image", "a.png", bytes);
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "net/http_message.hpp"
#include "platforms/common/access_token.hpp"
#include "platforms/common/signatures.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::net {
class HttpClient;
}

namespace sb::platforms::wecom {

// An API answer: HTTP 200 with a JSON object carrying errcode (0 = success).
struct ApiAnswer {
  std::int64_t errcode = 0;
  std::string errmsg;
  util::JsonObject body;
};

// kUpstreamFailed for a non-200 status or a body that is not a JSON object (naming `what`).
util::Result<ApiAnswer> ReadAnswer(const net::HttpResponse& response, std::string_view what);
// 40014 "invalid access_token", 42001 "access_token expired": fetch a new token and retry once.
bool IsTokenRejected(std::int64_t errcode);
// The error for a non-zero errcode: kUpstreamRateLimited for WeCom's frequency limits (45009,
// 45033, 95001...), kUpstreamAuth for credential errors, kUpstreamFailed otherwise; the message
// names `what`, the errcode and WeCom's errmsg (bounded), never a token.
util::Error Refusal(std::string_view what, const ApiAnswer& answer);
// multipart/form-data body with the one part WeCom's media/upload reads: `media`, with its
// filename and filelength. The Content-Type is "multipart/form-data; boundary=<boundary>".
std::string EncodeUpload(std::string_view boundary, std::string_view file_name,
                         std::string_view bytes);
using common::QueryEscape;  // kept under this name for the codec's callers and tests

struct Media {
  std::string bytes;
  std::string content_type;
};

// Thread-safe: calls may run concurrently from several coroutines.
class WeComApi {
 public:
  // `base` is api_base_url (default https://qyapi.weixin.qq.com/cgi-bin), without trailing '/'.
  WeComApi(std::shared_ptr<net::HttpClient> http, const util::Clock& clock, std::string base,
           std::string corp_id, std::string secret);

  // The cached token, or a fresh one from /gettoken. kUpstreamAuth when WeCom refuses the corp id
  // or secret; transport errors as net::HttpClient reports them.
  boost::asio::awaitable<util::Result<std::string>> Token();

  // POST `json_body` to base + path + "?access_token=..." and return the answer when errcode is
  // 0; a rejected token is replaced and the call made once more. `what` names the call in errors.
  boost::asio::awaitable<util::Result<util::JsonObject>> PostJson(std::string path,
                                                                  std::string json_body,
                                                                  std::string what);

  // media/upload of `type` (image, voice, video, file): the media_id (valid 3 days).
  boost::asio::awaitable<util::Result<std::string>> Upload(std::string type, std::string file_name,
                                                           std::string bytes);

  // media/get of a media id: its bytes (at most `max_bytes`, else kUpstreamFailed) and type.
  boost::asio::awaitable<util::Result<Media>> DownloadMedia(std::string media_id,
                                                            std::size_t max_bytes);

  // A plain GET of a URL a message names (an image to upload, a PicUrl), bounded the same way.
  boost::asio::awaitable<util::Result<Media>> FetchUrl(std::string url, std::size_t max_bytes);

 private:
  boost::asio::awaitable<util::Result<common::IssuedToken>> FetchToken();
  void Forget(const std::string& token) { tokens_.Invalidate(token); }
  std::string WithToken(std::string_view path, std::string_view token) const;

  const std::shared_ptr<net::HttpClient> http_;
  const util::Clock& clock_;
  const std::string base_;
  const std::string corp_id_;
  const std::string secret_;
  common::AccessTokenCache tokens_;
};

}  // namespace sb::platforms::wecom
