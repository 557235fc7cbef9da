// KOOK's REST API v3 as the adapter calls it: `Authorization: Bot <token>` requests with 429s
// waited out as X-Rate-Limit-Reset asks (common::SendWithRetry), user/me, gateway/index, and a
// Send's create calls (images fetched when given by URL, uploaded through asset/create, then sent
// as type 2). Internal to platforms/kook; the gateway loop is kook_adapter.cpp.
//   KookRest rest(context, token, "https://www.kookapp.cn/api");
//   auto me = co_await rest.UserMe();                       // the bot's id
//   co_await rest.SendAll(type, target, quote, calls, once);  // `once` gets the receipt or error
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "platforms/adapter_context.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/kook/kook_codec.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::kook {

class KookRest {
 public:
  // `context` outlives this object (its owner holds both). `base` is api_base_url ("…/api").
  KookRest(const AdapterContext& context, std::string token, std::string base);

  // `text` with the token replaced by "<token>", for anything logged or reported.
  std::string Scrub(std::string text) const;

  // GET /v3/user/me. An error marked `final` must not be retried (the token was refused).
  boost::asio::awaitable<util::Result<BotUser>> UserMe();
  // GET /v3/gateway/index?compress=0: the URL to dial (it carries a credential in its query).
  boost::asio::awaitable<util::Result<std::string>> GatewayIndex();

  // Posts `calls` in order to the channel (message/create) or the person (direct-message/create)
  // and finishes `once` with the last msg_id, or with the first error. `quote` goes on the first.
  boost::asio::awaitable<void> SendAll(domain::TargetType type, std::string target,
                                       std::string quote,
                                       std::shared_ptr<const std::vector<OutboundCall>> calls,
                                       std::shared_ptr<common::SendOnce> once);

 private:
  boost::asio::awaitable<util::Result<util::Json>> Call(std::string method, std::string path,
                                                        std::string body, std::string content_type,
                                                        std::chrono::milliseconds total);
  // The asset URL of the call's image: its bytes, or those fetched from its URL, uploaded.
  boost::asio::awaitable<util::Result<std::string>> UploadImage(const OutboundCall& call);
  boost::asio::awaitable<util::Result<std::string>> FetchImage(const std::string& url,
                                                               std::string& mime);

  const AdapterContext& context_;
  const std::string token_;
  const std::string base_;  // api_base_url, e.g. https://www.kookapp.cn/api
};

}  // namespace sb::platforms::kook
