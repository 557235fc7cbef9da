#include "platforms/wecom/wecom_api.hpp"

#include <fmt/format.h>

#include <utility>

#include "net/http_client.hpp"
#include "platforms/common/json_fields.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::wecom {
namespace {

namespace asio = boost::asio;
using util::ErrorCode;

// A token is taken as expired this long before WeCom says, so no call carries one that lapses
// on the way.
constexpr std::chrono::seconds kTokenMargin{300};
constexpr std::size_t kMaxErrmsg = 200;

net::HttpRequest Request(std::string method, std::string url, std::string body = {},
                         std::string content_type = {}) {
  net::HttpRequest request;
  request.method = std::move(method);
  request.url = std::move(url);
  if (!content_type.empty()) request.headers.emplace_back("Content-Type", std::move(content_type));
  request.body = std::move(body);
  request.timeouts.connect = std::chrono::seconds(10);
  request.timeouts.total = std::chrono::seconds(30);
  request.timeouts.idle = std::chrono::seconds(30);
  request.max_response_bytes = 1024 * 1024;
  return request;
}

bool IsJson(std::string_view content_type) {
  return content_type.find("json") != std::string_view::npos ||
         content_type.find("text/plain") != std::string_view::npos;
}

}  // namespace

util::Result<ApiAnswer> ReadAnswer(const net::HttpResponse& response, std::string_view what) {
  if (response.status != 200) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      fmt::format("WeCom {} answered HTTP {}", what, response.status));
  }
  auto json = util::ParseJson(response.body);
  if (!json || !json->is_object()) {
    return util::Fail(ErrorCode::kUpstreamFailed,
                      fmt::format("WeCom {} answered something that is not a JSON object", what));
  }
  ApiAnswer answer;
  answer.body = std::move(json->as_object());
  answer.errcode = common::IntField(answer.body, "errcode").value_or(0);
  answer.errmsg = std::string(common::StringOr(answer.body, "errmsg").substr(0, kMaxErrmsg));
  return answer;
}

bool IsTokenRejected(std::int64_t errcode) { return errcode == 40014 || errcode == 42001; }

util::Error Refusal(std::string_view what, const ApiAnswer& answer) {
  const std::string reason =
      fmt::format("WeCom refused {} (errcode {}: {})", what, answer.errcode, answer.errmsg);
  switch (answer.errcode) {
    case 45009:  // API frequency over the limit
    case 45033:  // too many concurrent calls
    case 45047:  // customer service: too many messages to this customer
    case 95001:  // customer service: send frequency over the limit
      return {ErrorCode::kUpstreamRateLimited, reason};
    case 40001:  // invalid secret
    case 40013:  // invalid corp id
    case 40014:
    case 41001:
    case 42001:
    case 40091:  // invalid secret (customer service)
    case 60020:  // not from one of the corp's trusted IPs
      return {ErrorCode::kUpstreamAuth, reason};
    default:
      return {ErrorCode::kUpstreamFailed, reason};
  }
}

std::string EncodeUpload(std::string_view boundary, std::string_view file_name,
                         std::string_view bytes) {
  std::string body;
  body.reserve(bytes.size() + 256);
  body += fmt::format(
      "--{}\r\nContent-Disposition: form-data; name=\"media\"; filename=\"{}\"; "
      "filelength={}\r\nContent-Type: application/octet-stream\r\n\r\n",
      boundary, file_name, bytes.size());
  body += bytes;
  body += fmt::format("\r\n--{}--\r\n", boundary);
  return body;
}

WeComApi::WeComApi(std::shared_ptr<net::HttpClient> http, const util::Clock& clock,
                   std::string base, std::string corp_id, std::string secret)
    : http_(std::move(http)),
      clock_(clock),
      base_(std::move(base)),
      corp_id_(std::move(corp_id)),
      secret_(std::move(secret)),
      tokens_(
          clock_, [this] { return FetchToken(); }, kTokenMargin) {}

std::string WeComApi::WithToken(std::string_view path, std::string_view token) const {
  const char joint = path.find('?') == std::string_view::npos ? '?' : '&';
  return fmt::format("{}{}{}access_token={}", base_, path, joint, QueryEscape(token));
}

asio::awaitable<util::Result<std::string>> WeComApi::Token() { return tokens_.Get(); }

asio::awaitable<util::Result<common::IssuedToken>> WeComApi::FetchToken() {
  auto response = co_await http_->Send(
      Request("GET", fmt::format("{}/gettoken?corpid={}&corpsecret={}", base_,
                                 QueryEscape(corp_id_), QueryEscape(secret_))));
  if (!response) {
    co_return util::Fail(response.error().code,
                         "WeCom gettoken failed: " + response.error().message);
  }
  auto answer = ReadAnswer(*response, "gettoken");
  if (!answer) co_return tl::unexpected(answer.error());
  if (answer->errcode != 0) {
    util::Error error = Refusal("the corpid and secret", *answer);
    if (error.code == ErrorCode::kUpstreamFailed) error.code = ErrorCode::kUpstreamAuth;
    co_return tl::unexpected(error);
  }
  const std::string token(common::StringOr(answer->body, "access_token"));
  if (token.empty()) {
    co_return util::Fail(ErrorCode::kUpstreamFailed, "WeCom gettoken answered no access_token");
  }
  co_return common::IssuedToken{
      token, std::chrono::seconds(common::IntField(answer->body, "expires_in").value_or(7200))};
}

asio::awaitable<util::Result<util::JsonObject>> WeComApi::PostJson(std::string path,
                                                                   std::string json_body,
                                                                   std::string what) {
  for (int attempt = 1;; ++attempt) {
    auto token = co_await Token();
    if (!token) co_return tl::unexpected(token.error());
    auto response = co_await http_->Send(
        Request("POST", WithToken(path, *token), json_body, "application/json; charset=utf-8"));
    if (!response) {
      co_return util::Fail(response.error().code,
                           fmt::format("WeCom {} failed: {}", what, response.error().message));
    }
    auto answer = ReadAnswer(*response, what);
    if (!answer) co_return tl::unexpected(answer.error());
    if (answer->errcode == 0) co_return std::move(answer->body);
    if (IsTokenRejected(answer->errcode) && attempt == 1) {
      Forget(*token);
      continue;
    }
    co_return tl::unexpected(Refusal(what, *answer));
  }
}

asio::awaitable<util::Result<std::string>> WeComApi::Upload(std::string type, std::string file_name,
                                                            std::string bytes) {
  const std::string boundary = "sb-" + util::RandomUrlSafe(24);
  const std::string body = EncodeUpload(boundary, file_name, bytes);
  for (int attempt = 1;; ++attempt) {
    auto token = co_await Token();
    if (!token) co_return tl::unexpected(token.error());
    auto request = Request("POST", WithToken("/media/upload?type=" + QueryEscape(type), *token),
                           body, "multipart/form-data; boundary=" + boundary);
    request.timeouts.total = std::chrono::seconds(120);
    auto response = co_await http_->Send(std::move(request));
    if (!response) {
      co_return util::Fail(response.error().code,
                           "WeCom media/upload failed: " + response.error().message);
    }
    auto answer = ReadAnswer(*response, "media/upload");
    if (!answer) co_return tl::unexpected(answer.error());
    if (answer->errcode == 0) {
      std::string media_id(common::StringOr(answer->body, "media_id"));
      if (media_id.empty()) {
        co_return util::Fail(ErrorCode::kUpstreamFailed, "WeCom media/upload answered no media_id");
      }
      co_return media_id;
    }
    if (IsTokenRejected(answer->errcode) && attempt == 1) {
      Forget(*token);
      continue;
    }
    co_return tl::unexpected(Refusal("media/upload", *answer));
  }
}

asio::awaitable<util::Result<Media>> WeComApi::DownloadMedia(std::string media_id,
                                                             std::size_t max_bytes) {
  for (int attempt = 1;; ++attempt) {
    auto token = co_await Token();
    if (!token) co_return tl::unexpected(token.error());
    auto request =
        Request("GET", WithToken("/media/get?media_id=" + QueryEscape(media_id), *token));
    request.max_response_bytes = max_bytes;
    request.timeouts.total = std::chrono::seconds(60);
    auto response = co_await http_->Send(std::move(request));
    if (!response) {
      co_return util::Fail(response.error().code,
                           "WeCom media/get failed: " + response.error().message);
    }
    const std::string content_type(response->Header("content-type"));
    // Errors come back as JSON; the media itself as its own type.
    if (response->status == 200 && !IsJson(content_type)) {
      if (response->body.empty()) {
        co_return util::Fail(ErrorCode::kUpstreamFailed, "WeCom media/get answered no bytes");
      }
      co_return Media{std::move(response->body), content_type};
    }
    auto answer = ReadAnswer(*response, "media/get");
    if (!answer) co_return tl::unexpected(answer.error());
    if (IsTokenRejected(answer->errcode) && attempt == 1) {
      Forget(*token);
      continue;
    }
    if (answer->errcode == 0) answer->errmsg = "no media in the answer";
    co_return tl::unexpected(Refusal("media/get", *answer));
  }
}

asio::awaitable<util::Result<Media>> WeComApi::FetchUrl(std::string url, std::size_t max_bytes) {
  auto request = Request("GET", std::move(url));
  request.max_response_bytes = max_bytes;
  request.timeouts.total = std::chrono::seconds(60);
  auto response = co_await http_->Send(std::move(request));
  if (!response) {
    co_return util::Fail(response.error().code,
                         "fetching the media failed: " + response.error().message);
  }
  if (response->status != 200 || response->body.empty()) {
    co_return util::Fail(ErrorCode::kUpstreamFailed,
                         fmt::format("fetching the media answered HTTP {}", response->status));
  }
  co_return Media{std::move(response->body), std::string(response->Header("content-type"))};
}

}  // namespace sb::platforms::wecom
