// The Satori HTTP API as the adapter calls it: `POST {api}/{resource}.{method}` with JSON, the
// bearer token and the login's Satori-Platform / Satori-User-ID headers; message.create for every
// send, user.channel.create for a person's direct channel (opened once, then remembered). Internal
// to platforms/satori; the event socket is satori_adapter.cpp.
//   SatoriApi api(context, token, endpoints.api);
//   api.SetLogin(login);                                  // from READY
//   co_await api.Deliver(type, target, content, once);   // `once` gets the receipt or the error
#pragma once

#include <boost/asio/awaitable.hpp>
#include <mutex>
#include <string>
#include <unordered_map>

#include "platforms/adapter_context.hpp"
#include "platforms/common/send_once.hpp"
#include "platforms/platform_adapter.hpp"
#include "platforms/satori/satori_codec.hpp"

namespace sb::platforms::satori {

// Thread-safe.
class SatoriApi {
 public:
  // `context` outlives this object (its owner holds both). `api` ends in "/v1".
  SatoriApi(const AdapterContext& context, std::string token, std::string api);

  // `text` with the token replaced by "<token>", for anything logged or reported.
  std::string Scrub(std::string text) const;

  // The account the calls act as (READY's login for the configured platform).
  void SetLogin(Login login);

  // Remembers the direct channel of `user_id` (seen on an incoming direct message).
  void RememberDm(const std::string& user_id, const std::string& channel_id);

  // Sends `content` to the channel (group) or to the person's direct channel and finishes `once`
  // with the created message's id, or with the first error: kUnavailable before READY named the
  // login, kUpstreamAuth for 401/403, kUpstreamFailed for other refusals (the server's reason),
  // the transport's errors as they are.
  boost::asio::awaitable<void> Deliver(domain::TargetType type, std::string target,
                                       std::string content, std::shared_ptr<common::SendOnce> once);

 private:
  boost::asio::awaitable<util::Result<std::string>> Call(std::string method, std::string body);
  boost::asio::awaitable<util::Result<std::string>> DirectChannel(const std::string& user_id);

  const AdapterContext& context_;
  const std::string token_;
  const std::string api_;

  mutable std::mutex mu_;
  Login login_;                                               // guarded by mu_
  std::unordered_map<std::string, std::string> dm_channels_;  // guarded by mu_
};

}  // namespace sb::platforms::satori
