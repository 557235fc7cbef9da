// The WeChatPad adapter's life cycle and sends, driven through the ports it is built on: a
// scripted HttpClient answering as LangBot's client expects WeChatPadPro to ({Code, Data, Text}
// with ?key=), a scripted message socket, and a SimulatedClock for the reconnect backoff.
#include "platforms/wechatpad/wechatpad_adapter.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "support/adapter_harness.hpp"
#include "support/scripted_websocket.hpp"
#include "util/json.hpp"
#include "util/simulated_clock.hpp"

namespace sb::platforms::wechatpad {
namespace {

using namespace std::chrono_literals;

constexpr const char* kKey = "pad key/1";  // needs percent-encoding in the URL
constexpr const char* kWxid = "wxid_padbot01";

bool Eventually(const std::function<bool()>& check) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (check()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return check();
}

std::string TextFrame(const std::string& from, const std::string& content, long long id) {
  return util::SerializeJson(util::JsonObject{{"msg_id", 1},
                                              {"from_user_name", util::JsonObject{{"str", from}}},
                                              {"to_user_name", util::JsonObject{{"str", kWxid}}},
                                              {"msg_type", 1},
                                              {"content", util::JsonObject{{"str", content}}},
                                              {"create_time", 1700000000},
                                              {"msg_source", ""},
                                              {"push_content", ""},
                                              {"new_msg_id", id}});
}

class WeChatPadAdapterTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (adapter_) {
      EXPECT_TRUE(test::StopAndWait(*adapter_));
      adapter_.reset();
    }
  }

  util::Result<net::HttpResponse> Answer(const net::HttpRequest& r) {
    if (r.url.starts_with("http://img.test/")) return test::Reply(200, "PNGBYTES");
    if (r.url.find("key=pad%20key%2F1") == std::string::npos) {
      return test::Reply(200, R"({"Code":300,"Data":null,"Text":"该key无效"})");
    }
    if (r.url.starts_with("http://pad.test/login/GetLoginStatus?")) {
      return test::Reply(200, logged_in_ ? R"({"Code":200,"Data":{"loginState":1},"Text":""})"
                                         : R"({"Code":300,"Data":null,"Text":"你已退出微信"})");
    }
    if (r.url.starts_with("http://pad.test/user/GetProfile?")) {
      return test::Reply(200, R"({"Code":200,"Data":{"userInfo":{"userName":{"str":")" +
                                  std::string(kWxid) + R"("},"nickName":{"str":"PadBot"}}}})");
    }
    if (r.url.starts_with("http://pad.test/group/GetChatroomMemberDetail?")) {
      return test::Reply(200, R"({"Code":200,"Data":{"member_data":{"chatroom_member_list":[
        {"user_name":"wxid_dora01","nick_name":"Dora"}]}}})");
    }
    if (r.url.starts_with("http://pad.test/message/")) {
      return test::Reply(200, R"({"Code":200,"Data":[{"isSendSuccess":true}],"Text":""})");
    }
    return test::Reply(404, "404 page not found");
  }

  void StartAdapter(std::string key = kKey) {
    AdapterContext context;
    context.bot_uuid = "bot-1";
    context.config = util::JsonObject{{"wechatpad_url", "http://pad.test/"},
                                      {"wechatpad_ws", "ws://pad.test/ws"},
                                      {"admin_key", ""},
                                      {"token", key},
                                      {"wxid", kWxid}};
    context.executor = io_.executor();
    context.http = http_;
    context.websockets = transport_;
    context.clock = &clock_;
    context.host = &host_;
    adapter_ = MakeWeChatPadAdapter(std::move(context));
    adapter_->Start();
  }

  std::shared_ptr<test::ScriptedConnection> Connection(std::size_t i) {
    EXPECT_TRUE(Eventually([&] { return transport_->count() > i; })) << "no connection " << i;
    return transport_->count() > i ? transport_->at(i) : nullptr;
  }

  test::IoThreads io_;
  util::SimulatedClock clock_;
  std::atomic<bool> logged_in_{true};
  std::shared_ptr<test::ScriptedHttp> http_ =
      std::make_shared<test::ScriptedHttp>([this](const net::HttpRequest& r) { return Answer(r); });
  std::shared_ptr<test::ScriptedTransport> transport_ = std::make_shared<test::ScriptedTransport>();
  test::RecordingHost host_;
  std::unique_ptr<PlatformAdapter> adapter_;
};

TEST_F(WeChatPadAdapterTest, ChecksTheLoginReadsTheProfileAndTakesMessages) {
  StartAdapter();
  auto conn = Connection(0);
  EXPECT_EQ(conn->url(), "ws://pad.test/ws/GetSyncMsg?key=pad%20key%2F1");
  ASSERT_TRUE(host_.WaitFor([&] { return host_.connected.size() == 1; }));
  EXPECT_EQ(host_.Read([&] { return host_.connected[0]; }), kWxid);
  const auto requests = http_->Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_TRUE(requests[0].url.starts_with("http://pad.test/login/GetLoginStatus?key="));
  conn->Push(TextFrame("wxid_ann001", "hello", 11));
  conn->Push(TextFrame("wxid_ann001", "hello", 11));  // the same new_msg_id again
  conn->Push(TextFrame("wxid_ann001", "again", 12));
  ASSERT_TRUE(host_.WaitFor([&] { return host_.messages.size() == 2; }));
  EXPECT_EQ(host_.Read([&] { return host_.messages[1].chain.back().text; }), "again");
}

TEST_F(WeChatPadAdapterTest, AWrongKeyOrALoggedOutAccountIsFinal) {
  StartAdapter("other key");
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.troubles.empty(); }));
  const std::string why = host_.Read([&] { return host_.troubles.back(); });
  EXPECT_NE(why.find("Code 300"), std::string::npos) << why;
  EXPECT_EQ(why.find("other key"), std::string::npos);
  clock_.Advance(120s);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(http_->Requests().size(), 1u);
  EXPECT_EQ(transport_->count(), 0u);
}

TEST_F(WeChatPadAdapterTest, ADroppedSocketIsReopenedOnlyWhileTheAccountIsLoggedIn) {
  StartAdapter();
  auto conn = Connection(0);
  ASSERT_TRUE(host_.WaitFor([&] { return host_.connected.size() == 1; }));
  logged_in_ = false;
  conn->ServerClose(1006, "");
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.troubles.empty(); }));
  EXPECT_TRUE(Eventually([&] { return clock_.pending() >= 1; }));
  clock_.Advance(2s);
  ASSERT_TRUE(host_.WaitFor(
      [&] { return host_.troubles.back().find("你已退出微信") != std::string::npos; }));
  EXPECT_EQ(transport_->count(), 1u);  // logged out: not reopened
}

TEST_F(WeChatPadAdapterTest, SendsTextWithNicknamesAndDownloadedImages) {
  StartAdapter();
  ASSERT_TRUE(host_.WaitFor([&] { return host_.connected.size() == 1; }));
  domain::OutgoingMessage m;
  m.target_type = domain::TargetType::kGroup;
  m.target_id = "7788@chatroom";
  domain::MessageElement text;
  text.text = "hi ";
  m.chain.push_back(text);
  domain::MessageElement at;
  at.type = domain::ElementType::kAt;
  at.target = "wxid_dora01";
  m.chain.push_back(at);
  domain::MessageElement image;
  image.type = domain::ElementType::kImage;
  image.url = "http://img.test/cat.png";
  m.chain.push_back(image);
  auto sent = test::SendAndWait(*adapter_, m);
  ASSERT_TRUE(sent) << sent.error().message;
  auto texts = http_->Requests();
  std::vector<std::string> urls;
  for (auto& r : texts) urls.push_back(r.url.substr(0, r.url.find('?')));
  ASSERT_EQ(urls.size(), 6u);
  EXPECT_EQ(urls[2], "http://pad.test/group/GetChatroomMemberDetail");
  EXPECT_EQ(urls[3], "http://img.test/cat.png");
  EXPECT_EQ(urls[4], "http://pad.test/message/SendTextMessage");
  EXPECT_EQ(urls[5], "http://pad.test/message/SendImageMessage");
  const util::Json body = util::ParseJson(texts[4].body).value();
  EXPECT_EQ(body.at("MsgItem").at(0).at("TextContent"), "hi @Dora ");
  EXPECT_EQ(body.at("MsgItem").at(0).at("AtWxIDList").at(0), "wxid_dora01");
  EXPECT_EQ(util::ParseJson(texts[5].body)->at("MsgItem").at(0).at("ImageContent"),
            "UE5HQllURVM=");  // base64 of the downloaded bytes
  // A refusal names the service's reason.
  http_->SetScript([](const net::HttpRequest&) -> util::Result<net::HttpResponse> {
    return test::Reply(200, R"({"Code":-1,"Data":null,"Text":"发送失败"})");
  });
  m.chain.resize(1);
  auto refused = test::SendAndWait(*adapter_, m);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, util::ErrorCode::kUpstreamFailed);
  EXPECT_NE(refused.error().message.find("发送失败"), std::string::npos);
}

}  // namespace
}  // namespace sb::platforms::wechatpad
