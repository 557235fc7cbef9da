// What the cores of both WeCom adapters (internal app, customer service) share: their config
// (corpid, secret, token, EncodingAESKey, api_base_url), the callback endpoint, the API client,
// the coroutine group, signing in (a first access token, with backoff), the upload-then-send loop
// over a message's parts, and fetching a received image. Each adapter's Core derives from it and
// adds only what differs: how callbacks become messages and how a part is addressed.
//   class Core : public WeComBase, public std::enable_shared_from_this<Core> { ... };
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "platforms/adapter_context.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/common/wechat_callback.hpp"
#include "platforms/coroutine_group.hpp"
#include "platforms/platform_adapter.hpp"
#include "platforms/wecom/wecom_api.hpp"
#include "platforms/wecom/wecom_outgoing.hpp"

namespace sb::platforms::wecom {

inline constexpr std::string_view kDefaultBase = "https://qyapi.weixin.qq.com/cgi-bin";
// Images users send are fetched so the model can see them; bigger ones are left out.
inline constexpr std::size_t kMaxReceivedMediaBytes = 10 * 1024 * 1024;

class WeComBase {
 public:
  // `product` names the adapter in log lines ("WeCom", "WeCom customer service").
  WeComBase(AdapterContext context, std::string product);
  WeComBase(const WeComBase&) = delete;
  WeComBase& operator=(const WeComBase&) = delete;

  void Stop(std::function<void()> stopped);
  void Abandon();

 protected:
  // Checks the config (reporting what is missing through OnTrouble) and starts signing in:
  // a first access token proves corpid and secret, then OnConnected(corpid). `self` keeps the
  // derived core alive while the coroutine runs.
  void StartWith(std::shared_ptr<WeComBase> self);
  // The callback endpoint, or null when the config is unusable (every callback is then refused).
  const common::WeChatEndpoint* Endpoint() const { return configured_ ? &endpoint_ : nullptr; }
  bool Stopping() const { return stopping_; }

  // Sends each part in order: text as it is, images and files uploaded first (their bytes
  // decoded or fetched, bounded); `text_body` and `media_body` make the adapter's JSON for
  // `path`. Completes `once` with the last call's msgid, or the first failure.
  boost::asio::awaitable<void> SendParts(
      std::vector<OutgoingPart> parts, std::string path,
      std::function<std::string(std::string_view text)> text_body,
      std::function<std::string(std::string_view msgtype, std::string_view media_id)> media_body,
      std::shared_ptr<common::SendOnce> once);

  // Fills chain[element] (an Image) with the bytes of `media_id` (media/get) or, without one,
  // of `pic_url`, as a data: URL. When they cannot be had the Image is removed with a log line;
  // returns false when nothing but the Source is left.
  boost::asio::awaitable<bool> FetchImage(domain::ReceivedMessage& message, std::size_t element,
                                          std::string media_id, std::string pic_url);

  void Log(domain::LogLevel level, std::string text) const;

  const AdapterContext context_;
  const std::string product_;
  const std::string corp_id_;
  WeComApi api_;
  const std::shared_ptr<CoroutineGroup> group_;

 private:
  boost::asio::awaitable<void> SignIn();
  boost::asio::awaitable<util::Result<std::string>> UploadPart(const OutgoingPart& part);

  common::WeChatEndpoint endpoint_;
  bool configured_ = false;
  std::atomic<bool> stopping_{false};
};

}  // namespace sb::platforms::wecom
