// The WeChatPadPro HTTP API as the adapter calls it (the calls LangBot's libs/wechatpad_api
// makes): GET /login/GetLoginStatus and /user/GetProfile at start, POST
// /message/SendTextMessage and /message/SendImageMessage for sends, POST
// /group/GetChatroomMemberDetail for the nicknames an @ needs, every call with `?key=<token>`.
// Internal to platforms/wechatpad; the message socket is wechatpad_adapter.cpp.
//   WeChatPadApi api(context, token, endpoints.http);
//   auto status = co_await api.Get("/login/GetLoginStatus");
//   co_await api.Deliver(std::move(message), once);
#pragma once

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>

#include "platforms/adapter_context.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/platform_adapter.hpp"
#include "platforms/wechatpad/wechatpad_codec.hpp"

namespace sb::platforms::wechatpad {

// Thread-safe (no mutable state).
class WeChatPadApi {
 public:
  // `context` outlives this object (its owner holds both).
  WeChatPadApi(const AdapterContext& context, std::string token, std::string base);

  // `text` with the token (and its URL-encoded form) replaced by "<token>".
  std::string Scrub(std::string text) const;

  // One call; the decoded answer whatever its Code. kUpstreamFailed for a non-2xx status or a
  // body that is no answer, the transport's errors otherwise; messages never hold the key.
  boost::asio::awaitable<util::Result<Answer>> Get(std::string path);
  boost::asio::awaitable<util::Result<Answer>> Post(std::string path, util::JsonObject body);

  // Sends `message` (which passed CheckDeliverable): looks up chatroom nicknames when the chain
  // has At elements, downloads images given by URL (at most 10 MB each), then posts the calls of
  // EncodeOutgoing in order. `once` gets an empty receipt, or the first error (kUpstreamFailed
  // with the service's Text when its Code is not 200).
  boost::asio::awaitable<void> Deliver(domain::OutgoingMessage message,
                                       std::shared_ptr<common::SendOnce> once);

 private:
  boost::asio::awaitable<util::Result<Answer>> Call(std::string method, std::string path,
                                                    std::string body);
  boost::asio::awaitable<util::Result<std::string>> DownloadBase64(const std::string& url);

  const AdapterContext& context_;
  const std::string token_;
  const std::string base_;
};

}  // namespace sb::platforms::wechatpad
