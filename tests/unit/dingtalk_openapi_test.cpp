// DingTalkOpenApi against a scripted HTTP client and a simulated clock: the access token is
// cached, renewed 5 minutes before expireIn runs out, fetched again and the call repeated once
// when DingTalk rejects it; refused credentials fail without the secret; downloads stay bounded
// to http(s) URLs.
#include "platforms/dingtalk/dingtalk_openapi.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>
#include <set>
#include <string>

#include "support/adapter_harness.hpp"
#include "util/json.hpp"
#include "util/simulated_clock.hpp"

namespace sb::platforms::dingtalk {
namespace {

using test::Reply;
using util::ErrorCode;

constexpr std::string_view kSecret = "dingtalk-secret-for-unit-tests";

class DingTalkOpenApiTest : public ::testing::Test {
 protected:
  template <class T>
  T Run(boost::asio::awaitable<T> call) {
    std::optional<T> out;
    boost::asio::co_spawn(
        io_, [&]() -> boost::asio::awaitable<void> { out.emplace(co_await std::move(call)); },
        boost::asio::detached);
    io_.restart();
    io_.run();
    return std::move(*out);
  }

  // Answers tokens "t1", "t2", ... and robot sends with `send_status` unless the token is in
  // `rejected`.
  void Script(int send_status = 200) {
    http_->SetScript(
        [this, send_status](const net::HttpRequest& r) -> util::Result<net::HttpResponse> {
          if (r.url.ends_with("/v1.0/oauth2/accessToken")) {
            auto body = util::ParseJson(r.body)->as_object();
            if (body["appSecret"] != util::Json(kSecret)) {
              return Reply(400, R"({"code":"invalidClientIdOrSecret","message":"bad"})");
            }
            return Reply(
                200, R"({"accessToken":"t)" + std::to_string(++tokens_) + R"(","expireIn":7200})");
          }
          const std::string token = test::HeaderOf(r, "x-acs-dingtalk-access-token");
          if (rejected_.count(token) != 0) {
            return Reply(401, R"({"code":"InvalidAuthentication","message":"bad token"})");
          }
          return Reply(send_status, R"({"processQueryKey":"k"})");
        });
  }

  boost::asio::io_context io_;
  std::shared_ptr<test::ScriptedHttp> http_ = std::make_shared<test::ScriptedHttp>(nullptr);
  util::SimulatedClock clock_;
  int tokens_ = 0;
  std::set<std::string> rejected_;
};

TEST_F(DingTalkOpenApiTest, TheTokenIsCachedAndRenewedFiveMinutesEarly) {
  Script();
  DingTalkOpenApi api(http_, clock_, "http://fake", "id", std::string(kSecret));
  ASSERT_TRUE(Run(api.Post("/v1.0/robot/groupMessages/send", "{}")));
  ASSERT_TRUE(Run(api.Post("/v1.0/robot/groupMessages/send", "{}")));
  EXPECT_EQ(http_->RequestsTo("/v1.0/oauth2/accessToken").size(), 1u);
  auto token_request = util::ParseJson(http_->RequestsTo("/accessToken")[0].body)->as_object();
  EXPECT_EQ(token_request["appKey"], "id");
  clock_.Advance(std::chrono::seconds(7200 - 301));
  ASSERT_TRUE(Run(api.Post("/v1.0/robot/groupMessages/send", "{}")));
  EXPECT_EQ(http_->RequestsTo("/v1.0/oauth2/accessToken").size(), 1u);
  clock_.Advance(std::chrono::seconds(2));
  ASSERT_TRUE(Run(api.Post("/v1.0/robot/groupMessages/send", "{}")));
  EXPECT_EQ(http_->RequestsTo("/v1.0/oauth2/accessToken").size(), 2u);
  auto sends = http_->RequestsTo("/groupMessages/send");
  EXPECT_EQ(test::HeaderOf(sends.back(), "x-acs-dingtalk-access-token"), "t2");
}

TEST_F(DingTalkOpenApiTest, ARejectedTokenIsFetchedAgainAndTheCallRepeatedOnce) {
  Script();
  DingTalkOpenApi api(http_, clock_, "http://fake", "id", std::string(kSecret));
  rejected_ = {"t1"};
  auto answer = Run(api.Post("/v1.0/robot/oToMessages/batchSend", "{}"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(http_->RequestsTo("/batchSend").size(), 2u);
  // Rejected again after the new token: the answer is returned, not retried forever.
  rejected_ = {"t2", "t3"};
  answer = Run(api.Post("/v1.0/robot/oToMessages/batchSend", "{}"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 401);
  EXPECT_EQ(http_->RequestsTo("/batchSend").size(), 4u);
}

TEST_F(DingTalkOpenApiTest, RefusedCredentialsFailWithoutTheSecret) {
  Script();
  const std::string wrong = "wrong-secret-value-1234";
  DingTalkOpenApi api(http_, clock_, "http://fake", "id", wrong);
  auto answer = Run(api.Post("/v1.0/robot/oToMessages/batchSend", "{}"));
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_NE(answer.error().message.find("invalidClientIdOrSecret"), std::string::npos);
  EXPECT_EQ(answer.error().message.find(wrong), std::string::npos);
  EXPECT_TRUE(http_->RequestsTo("/batchSend").empty());
  EXPECT_EQ(api.Scrub("secret " + wrong + " here"), "secret *** here");
}

TEST_F(DingTalkOpenApiTest, RefusedStreamCredentialsAreFinalAndAnOutageIsNot) {
  DingTalkOpenApi api(http_, clock_, "http://fake", "id", std::string(kSecret));
  int status = 400;
  http_->SetScript([&status](const net::HttpRequest& r) -> util::Result<net::HttpResponse> {
    EXPECT_TRUE(r.url.ends_with("/v1.0/gateway/connections/open"));
    if (status != 200) return Reply(status, R"({"code":"invalidClientIdOrSecret","message":"no"})");
    return Reply(200, R"({"endpoint":"ws://127.0.0.1:1/connect","ticket":"t"})");
  });
  auto refused = Run(api.OpenConnection());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUpstreamAuth);
  EXPECT_TRUE(refused.error().final);
  EXPECT_EQ(refused.error().message.find(kSecret), std::string::npos);
  status = 502;
  auto outage = Run(api.OpenConnection());
  ASSERT_FALSE(outage);
  EXPECT_FALSE(outage.error().final);
  status = 200;
  auto opened = Run(api.OpenConnection());
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->endpoint, "ws://127.0.0.1:1/connect");
  auto body = util::ParseJson(http_->Requests().back().body)->as_object();
  EXPECT_EQ(body["clientSecret"], util::Json(kSecret));
}

TEST_F(DingTalkOpenApiTest, DownloadsFollowOnlyHttpUrlsAndKeepTheImageType) {
  Script();
  DingTalkOpenApi api(http_, clock_, "http://fake", "id", std::string(kSecret));
  http_->SetScript([](const net::HttpRequest& r) -> util::Result<net::HttpResponse> {
    if (r.url.ends_with("/accessToken"))
      return Reply(200, R"({"accessToken":"t","expireIn":7200})");
    if (r.url.ends_with("/messageFiles/download")) {
      auto body = util::ParseJson(r.body)->as_object();
      if (body["downloadCode"] == "evil")
        return Reply(200, R"({"downloadUrl":"file:///etc/passwd"})");
      return Reply(200, R"({"downloadUrl":"http://files/a.png"})");
    }
    return Reply(200, "PNG", {{"content-type", "image/png; charset=binary"}});
  });
  auto image = Run(api.DownloadImage("dc", "robot"));
  ASSERT_TRUE(image) << image.error().message;
  EXPECT_EQ(*image, "data:image/png;base64,UE5H");
  auto get = http_->RequestsTo("/a.png");
  ASSERT_EQ(get.size(), 1u);
  EXPECT_EQ(get[0].max_response_bytes, 10u * 1024 * 1024);
  EXPECT_FALSE(Run(api.DownloadImage("evil", "robot")));
}

}  // namespace
}  // namespace sb::platforms::dingtalk
