// Discord's REST v10 as the adapter calls it: authorised requests with the 429 policy (wait up to
// 30 s as asked, at most 3 times), Get Gateway Bot, DM channels opened once and remembered, and a
// Send's Create Message calls. Internal to platforms/discord; the gateway loop is
// discord_adapter.cpp.
//   DiscordRest rest(context, token, base + "/v10");
//   co_await rest.SendAll(type, target, calls, once);  // `once` gets the receipt or the error
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "platforms/adapter_context.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/discord/discord_codec.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::discord {

class DiscordRest {
 public:
  // `context` outlives this object (its owner holds both).
  DiscordRest(const AdapterContext& context, std::string token, std::string base);

  // `text` with the token replaced by "<token>", for anything logged or reported.
  std::string Scrub(std::string text) const;

  // Get Gateway Bot. An error marked `final` must not be retried (the token was refused).
  boost::asio::awaitable<util::Result<GatewayBot>> GetGatewayBot();

  // Posts `calls` in order to the channel (or to the person's DM channel) and finishes `once`
  // with the last message id, or with the first error.
  boost::asio::awaitable<void> SendAll(domain::TargetType type, std::string target,
                                       std::shared_ptr<const std::vector<OutboundCall>> calls,
                                       std::shared_ptr<common::SendOnce> once);

  // Remembers the DM channel of `user_id` (seen on an incoming direct message). Thread-safe.
  void RememberDm(const std::string& user_id, const std::string& channel_id);

 private:
  struct RestOutcome {
    bool ok = false;
    std::string body;  // when ok
    util::Error error{};
  };

  boost::asio::awaitable<RestOutcome> Rest(std::string method, std::string path, std::string body,
                                           std::string content_type,
                                           std::chrono::milliseconds total);
  static std::string Route(std::string_view path);
  boost::asio::awaitable<util::Result<std::string>> DmChannel(const std::string& user_id);
  void Log(domain::LogLevel level, std::string text);

  const AdapterContext& context_;
  const std::string token_;
  const std::string base_;  // api_base_url + "/v10"

  std::mutex mu_;
  std::unordered_map<std::string, std::string> dm_channels_;  // guarded by mu_
};

}  // namespace sb::platforms::discord
