#include "platforms/wecom/wecom_base.hpp"

#include <fmt/format.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>

#include "platforms/common/config_reader.hpp"
#include "platforms/common/json_fields.hpp"
#include "platforms/common/reconnect_backoff.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/common/wechat_crypto.hpp"

namespace sb::platforms::wecom {
namespace {

namespace asio = boost::asio;
using domain::LogLevel;
using util::ErrorCode;

std::string MimeOr(std::string mime, std::string_view fallback) {
  const auto semi = mime.find(';');
  if (semi != std::string::npos) mime.resize(semi);
  if (mime.empty() || mime.find('/') == std::string::npos || mime.size() > 100 ||
      mime.find("json") != std::string::npos || mime.find("text/") == 0) {
    return std::string(fallback);
  }
  return mime;
}

}  // namespace

WeComBase::WeComBase(AdapterContext context, std::string product)
    : context_(std::move(context)),
      product_(std::move(product)),
      corp_id_(common::ConfigString(context_.config, "corpid")),
      api_(context_.http, *context_.clock,
           common::ConfigBaseUrl(context_.config, "api_base_url", kDefaultBase), corp_id_,
           common::ConfigString(context_.config, "secret")),
      group_(CoroutineGroup::Make(context_.executor)) {
  endpoint_.token = common::ConfigString(context_.config, "token");
  endpoint_.receive_id = corp_id_;
  auto key = common::WeChatAesKey(common::ConfigString(context_.config, "EncodingAESKey"));
  if (key) endpoint_.aes_key = std::move(*key);
  // WeCom always encrypts callbacks: without a key (or token, or corp id to check the receive
  // id against) no callback can be checked, so none is taken.
  configured_ = !endpoint_.token.empty() && !endpoint_.aes_key.empty() && !corp_id_.empty();
}

void WeComBase::StartWith(std::shared_ptr<WeComBase> self) {
  if (corp_id_.empty()) {
    context_.host->OnTrouble("no corpid configured: callbacks cannot be checked");
    return;
  }
  if (endpoint_.token.empty()) {
    context_.host->OnTrouble("no token configured: every callback would be refused");
    return;
  }
  if (endpoint_.aes_key.empty()) {
    context_.host->OnTrouble(
        "EncodingAESKey is not 43 base64 characters: every callback would be refused");
    return;
  }
  if (common::ConfigString(context_.config, "secret").empty()) {
    context_.host->OnTrouble("no secret configured: replies cannot be sent");
    return;
  }
  group_->Spawn([self]() { return self->SignIn(); });
}

void WeComBase::Stop(std::function<void()> stopped) {
  if (stopping_.exchange(true)) return;
  group_->Close(std::move(stopped));
}

void WeComBase::Abandon() {
  if (stopping_.exchange(true)) return;
  group_->Close(nullptr);
}

void WeComBase::Log(LogLevel level, std::string text) const {
  context_.host->Log(level, std::move(text));
}

asio::awaitable<void> WeComBase::SignIn() {
  co_await asio::this_coro::throw_if_cancelled(false);
  common::ReconnectBackoff backoff;
  for (;;) {
    auto token = co_await api_.Token();
    if (token) {
      context_.host->OnConnected(corp_id_);
      Log(LogLevel::kInfo,
          fmt::format("{}: access token obtained for corp {}", product_, corp_id_));
      co_return;
    }
    if (token.error().code == ErrorCode::kCancelled) co_return;
    if (token.error().code == ErrorCode::kUpstreamAuth) {
      // Trying again with the same corpid and secret cannot help.
      context_.host->OnTrouble(token.error().message);
      co_return;
    }
    const auto delay = backoff.NextDelay(context_.clock->Now());
    context_.host->OnTrouble(fmt::format("{}; {}", token.error().message, backoff.Describe(delay)));
    asio::steady_timer timer(co_await asio::this_coro::executor, delay);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    auto state = co_await asio::this_coro::cancellation_state;
    if (ec || state.cancelled() != asio::cancellation_type::none) co_return;
  }
}

asio::awaitable<util::Result<std::string>> WeComBase::UploadPart(const OutgoingPart& part) {
  std::string bytes;
  std::string name = part.name;
  if (part.kind == PartKind::kImage && !part.base64.empty()) {
    auto decoded = DecodeImageBase64(part.base64);
    if (!decoded) co_return tl::unexpected(decoded.error());
    bytes = std::move(*decoded);
  } else {
    auto fetched = co_await api_.FetchUrl(part.url, kMaxUploadBytes);
    if (!fetched) co_return tl::unexpected(fetched.error());
    bytes = std::move(fetched->bytes);
  }
  if (part.kind == PartKind::kImage) {
    // WeCom takes JPG and PNG images; the name's extension is what it looks at.
    const bool png = bytes.size() > 4 && bytes.compare(0, 4, "\x89PNG") == 0;
    name = png ? "image.png" : "image.jpg";
  }
  co_return co_await api_.Upload(part.kind == PartKind::kImage ? "image" : "file", name,
                                 std::move(bytes));
}

asio::awaitable<void> WeComBase::SendParts(
    std::vector<OutgoingPart> parts, std::string path,
    std::function<std::string(std::string_view)> text_body,
    std::function<std::string(std::string_view, std::string_view)> media_body,
    std::shared_ptr<common::SendOnce> once) {
  co_await asio::this_coro::throw_if_cancelled(false);
  domain::SendReceipt receipt;
  for (const OutgoingPart& part : parts) {
    std::string body;
    if (part.kind == PartKind::kText) {
      body = text_body(part.text);
    } else {
      auto media_id = co_await UploadPart(part);
      if (!media_id) {
        (*once)(tl::unexpected(media_id.error()));
        co_return;
      }
      body = media_body(part.kind == PartKind::kImage ? "image" : "file", *media_id);
    }
    auto answer = co_await api_.PostJson(path, std::move(body), path.substr(1));
    if (!answer) {
      if (answer.error().code == ErrorCode::kUpstreamAuth) {
        context_.host->OnTrouble(answer.error().message);
      }
      (*once)(tl::unexpected(answer.error()));
      co_return;
    }
    if (auto id = common::StringOr(*answer, "msgid"); !id.empty()) {
      receipt.message_id = std::string(id);
    }
  }
  (*once)(receipt);
}

asio::awaitable<bool> WeComBase::FetchImage(domain::ReceivedMessage& message, std::size_t element,
                                            std::string media_id, std::string pic_url) {
  util::Result<Media> media = util::Fail(ErrorCode::kInvalidArgument, "no media");
  if (!media_id.empty()) {
    media = co_await api_.DownloadMedia(std::move(media_id), kMaxReceivedMediaBytes);
  } else {
    media = co_await api_.FetchUrl(std::move(pic_url), kMaxReceivedMediaBytes);
  }
  if (media) {
    message.chain[element].base64 = "data:" + MimeOr(media->content_type, "image/jpeg") +
                                    ";base64," + common::Base64Encode(media->bytes);
    co_return true;
  }
  Log(LogLevel::kWarning, fmt::format("left out the image of {} message {}: {}", product_,
                                      message.message_id, media.error().message));
  message.chain.erase(message.chain.begin() + static_cast<long>(element));
  co_return message.chain.size() > 1;
}

}  // namespace sb::platforms::wecom
