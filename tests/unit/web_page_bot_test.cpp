// The web page bot's pure parts and its adapter against a scripted siteverify: visitor ids, the
// socket frames, outgoing chains as the widget draws them, tickets, the Turnstile siteverify body
// and answer (Cloudflare's documented shapes), the bounds on visitors (sockets, rate, idle,
// remembered history) and the served assets.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "platforms/web_page_bot/web_page_adapter.hpp"
#include "platforms/web_page_bot/web_page_assets.hpp"
#include "platforms/web_page_bot/web_page_codec.hpp"
#include "platforms/web_page_bot/web_page_visitors.hpp"
#include "support/adapter_harness.hpp"
#include "util/clock.hpp"
#include "util/json.hpp"
#include "util/simulated_clock.hpp"

namespace sb::platforms::web_page {
namespace {

using domain::ElementType;
using namespace std::chrono_literals;

constexpr std::string_view kVisitor = "0f8fad5b-d9cb-469f-a165-70867728950e";

TEST(WebPageCodec, VisitorIdsAreCanonicalVersion4Uuids) {
  EXPECT_TRUE(IsVisitorId(kVisitor));
  EXPECT_FALSE(IsVisitorId("0F8FAD5B-D9CB-469F-A165-70867728950E"));  // upper case
  EXPECT_FALSE(IsVisitorId("0f8fad5b-d9cb-169f-a165-70867728950e"));  // version 1
  EXPECT_FALSE(IsVisitorId("0f8fad5b-d9cb-469f-c165-70867728950e"));  // variant
  EXPECT_FALSE(IsVisitorId("0f8fad5bd9cb469fa16570867728950e"));
  EXPECT_FALSE(IsVisitorId("../../etc/passwd-aaaa-bbbb-cccc-dddddd"));
  EXPECT_FALSE(IsVisitorId(""));
}

TEST(WebPageCodec, ClientFrames) {
  auto m = DecodeClientFrame(R"({"type":"message","text":"hello 你好"})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, ClientFrame::Kind::kMessage);
  EXPECT_EQ(m->text, "hello 你好");
  auto p = DecodeClientFrame(R"({"type":"ping"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->kind, ClientFrame::Kind::kPing);
  for (const char* bad :
       {"", "[]", "{", R"({"type":"other"})", R"({"type":"message"})",
        R"({"type":"message","text":"  \n"})", R"({"type":"message","text":5})"}) {
    EXPECT_FALSE(DecodeClientFrame(bad)) << bad;
  }
  const std::string long_text(kMaxTextBytes + 1, 'a');
  auto too_long = DecodeClientFrame(R"({"type":"message","text":")" + long_text + "\"}");
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error().code, util::ErrorCode::kPayloadTooLarge);
}

TEST(WebPageCodec, AVisitorsMessageIsAPrivateChat) {
  auto m = ToReceived(std::string(kVisitor), "hi", "v1");
  EXPECT_EQ(m.chat_type, domain::TargetType::kPerson);
  EXPECT_EQ(m.chat_id, kVisitor);
  EXPECT_EQ(m.sender_id, kVisitor);
  EXPECT_EQ(m.message_id, "v1");
  ASSERT_EQ(m.chain.size(), 2u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[1].text, "hi");
}

TEST(WebPageCodec, CheckDeliverable) {
  domain::OutgoingMessage m{domain::TargetType::kPerson, std::string(kVisitor), {}};
  domain::MessageElement plain;
  plain.text = "x";
  m.chain.push_back(plain);
  EXPECT_TRUE(CheckDeliverable(m));
  m.target_type = domain::TargetType::kGroup;
  EXPECT_FALSE(CheckDeliverable(m));
  m.target_type = domain::TargetType::kPerson;
  m.target_id = "someone";
  EXPECT_FALSE(CheckDeliverable(m));
  m.target_id = std::string(kVisitor);
  domain::MessageElement file;
  file.type = ElementType::kFile;
  m.chain.push_back(file);
  auto r = CheckDeliverable(m);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "message_chain[1]: File needs a url");
}

TEST(WebPageCodec, ElementsForThePage) {
  domain::MessageChain chain(6);
  chain[0].text = "a";
  chain[1].text = "b";
  chain[2].type = ElementType::kImage;
  chain[2].base64 = "iVBOR";
  chain[3].type = ElementType::kAt;
  chain[3].target = "x";
  chain[4].type = ElementType::kFile;
  chain[4].url = "https://example.com/f.pdf";
  chain[4].name = "f.pdf";
  chain[5].type = ElementType::kImage;
  chain[5].url = "https://example.com/i.png";
  EXPECT_EQ(util::SerializeJson(EncodeElements(chain)),
            R"([{"type":"text","text":"ab"},{"type":"image","url":"data:image/png;base64,iVBOR"},)"
            R"({"type":"file","url":"https://example.com/f.pdf","name":"f.pdf"},)"
            R"({"type":"image","url":"https://example.com/i.png"}])");
}

TEST(WebPageCodec, ServerFrames) {
  auto entry = MessageEntry("bot", "b1", util::JsonArray{}, 1700000000);
  EXPECT_EQ(MessageFrame(entry),
            R"({"role":"bot","id":"b1","elements":[],"timestamp":1700000000,"type":"message"})");
  EXPECT_EQ(ReadyFrame(kVisitor, {entry}),
            R"({"type":"ready","visitor":"0f8fad5b-d9cb-469f-a165-70867728950e","history":[)"
            R"({"role":"bot","id":"b1","elements":[],"timestamp":1700000000}]})");
  EXPECT_EQ(ErrorFrame("rate_limited", "slow down"),
            R"({"type":"error","code":"rate_limited","message":"slow down"})");
}

TEST(WebPageCodec, TicketsAreBoundToVisitorKeyAndTime) {
  const std::string t = MakeTicket("key", kVisitor, 2000);
  EXPECT_TRUE(t.starts_with("2000."));
  EXPECT_TRUE(CheckTicket("key", kVisitor, t, 1999));
  EXPECT_TRUE(CheckTicket("key", kVisitor, t, 2000));
  EXPECT_FALSE(CheckTicket("key", kVisitor, t, 2001));  // expired
  EXPECT_FALSE(CheckTicket("other", kVisitor, t, 1000));
  EXPECT_FALSE(CheckTicket("key", "1f8fad5b-d9cb-469f-a165-70867728950e", t, 1000));
  std::string forged = t;
  forged.replace(0, 4, "9999");  // a later expiry with the old MAC
  EXPECT_FALSE(CheckTicket("key", kVisitor, forged, 1000));
  for (const char* bad : {"", ".", "2000", "2000.", "x.abc", "-1.abc"}) {
    EXPECT_FALSE(CheckTicket("key", kVisitor, bad, 1000)) << bad;
  }
}

TEST(WebPageCodec, SiteverifyAsCloudflareDocumentsIt) {
  EXPECT_EQ(SiteverifyBody("0x4AAA", "tok.en+/=", "203.0.113.7"),
            "secret=0x4AAA&response=tok.en%2B%2F%3D&remoteip=203.0.113.7");
  EXPECT_EQ(SiteverifyBody("s", "t", ""), "secret=s&response=t");
  // The documented answers.
  auto ok = ParseSiteverify(
      R"({"success":true,"challenge_ts":"2022-02-28T15:14:30.096Z","hostname":"example.com",)"
      R"("error-codes":[],"action":"login","cdata":"sessionid-123456789"})");
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->success);
  EXPECT_TRUE(ok->error_codes.empty());
  auto refused = ParseSiteverify(R"({"success":false,"error-codes":["invalid-input-response"]})");
  ASSERT_TRUE(refused);
  EXPECT_FALSE(refused->success);
  EXPECT_EQ(refused->error_codes, std::vector<std::string>{"invalid-input-response"});
  EXPECT_FALSE(ParseSiteverify("<html>"));
  EXPECT_FALSE(ParseSiteverify("[]"));
}

class FakeSocket : public domain::PlatformSocket {
 public:
  void SendText(std::string text) override { sent.push_back(std::move(text)); }
  void Close(int code, std::string) override { closed = code; }
  std::vector<std::string> sent;
  int closed = 0;
};

TEST(WebPageVisitors, SocketBounds) {
  Limits limits;
  limits.max_sockets = 3;
  limits.max_sockets_per_visitor = 2;
  limits.max_sockets_per_address = 2;
  VisitorTable table(limits);
  const util::TimePoint now = util::FromUnixMillis(1'000'000);
  auto s = std::make_shared<FakeSocket>();
  auto a = table.Attach("v1", "10.0.0.1", s, now);
  ASSERT_TRUE(a);
  ASSERT_TRUE(table.Attach("v1", "10.0.0.2", s, now));
  auto third = table.Attach("v1", "10.0.0.3", s, now);
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code, util::ErrorCode::kRateLimited);
  ASSERT_TRUE(table.Attach("v2", "10.0.0.1", s, now));
  auto address = table.Attach("v3", "10.0.0.1", s, now);  // third socket, and 10.0.0.1 is full
  ASSERT_FALSE(address);
  table.Detach("v1", *a);
  EXPECT_EQ(table.SocketCount(), 2u);
  ASSERT_TRUE(table.Attach("v3", "10.0.0.4", s, now));
  auto full = table.Attach("v4", "10.0.0.5", s, now);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, util::ErrorCode::kUnavailable);
  EXPECT_EQ(table.SocketsOf("v1").size(), 1u);
  EXPECT_EQ(table.AllSockets().size(), 3u);
}

TEST(WebPageVisitors, RateIsATokenBucketPerVisitor) {
  Limits limits;
  limits.burst = 2;
  limits.refill = 1s;
  limits.strikes_before_close = 3;
  VisitorTable table(limits);
  util::TimePoint now = util::FromUnixMillis(1'000'000);
  auto s = std::make_shared<FakeSocket>();
  auto id = *table.Attach("v", "a", s, now);
  EXPECT_EQ(table.Admit("v", id, now), Admission::kAccepted);
  EXPECT_EQ(table.Admit("v", id, now), Admission::kAccepted);
  EXPECT_EQ(table.Admit("v", id, now), Admission::kRefused);
  now += 1s;
  EXPECT_EQ(table.Admit("v", id, now), Admission::kAccepted);  // one more token, strikes reset
  EXPECT_EQ(table.Admit("v", id, now), Admission::kRefused);
  EXPECT_EQ(table.Admit("v", id, now), Admission::kRefused);
  EXPECT_EQ(table.Admit("v", id, now), Admission::kClose);
  // Another tab of the same visitor shares the bucket.
  auto other = *table.Attach("v", "a", s, now);
  EXPECT_NE(table.Admit("v", other, now), Admission::kAccepted);
}

TEST(WebPageVisitors, IdleSocketsAreFound) {
  Limits limits;
  limits.idle = 60s;
  VisitorTable table(limits);
  util::TimePoint now = util::FromUnixMillis(1'000'000);
  auto quiet = std::make_shared<FakeSocket>();
  auto busy = std::make_shared<FakeSocket>();
  (void)*table.Attach("q", "a", quiet, now);
  auto b = *table.Attach("b", "a", busy, now);
  table.Touch("b", b, now + 50s);
  auto idle = table.Idle(now + 61s);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0], quiet);
}

TEST(WebPageVisitors, HistoryIsBoundedAndTheOldestDisconnectedVisitorsAreForgotten) {
  Limits limits;
  limits.history_messages = 2;
  limits.max_visitors = 2;
  VisitorTable table(limits);
  util::TimePoint now = util::FromUnixMillis(1'000'000);
  for (int i = 0; i < 3; ++i) {
    table.Record("v1", util::JsonObject{{"n", i}}, now);
  }
  auto history = table.History("v1");
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].at("n").as_int64(), 1);
  auto s = std::make_shared<FakeSocket>();
  (void)*table.Attach("v2", "a", s, now + 1s);  // connected: never forgotten while so
  table.Record("v3", util::JsonObject{}, now + 2s);
  EXPECT_FALSE(table.Known("v1"));
  EXPECT_TRUE(table.Known("v2"));
  EXPECT_TRUE(table.Known("v3"));
  EXPECT_EQ(table.VisitorCount(), 2u);
}

TEST(WebPageAssets, WidgetCarriesTitleLanguageAndNothingElse) {
  WidgetSettings s{"Help </script><b>", "zh_Hans", ""};
  const std::string js = RenderWidgetScript(s);
  EXPECT_EQ(js.find("__SB_CONFIG__"), std::string::npos);
  EXPECT_EQ(js.find("</script>"), std::string::npos);  // the title cannot end a script
  EXPECT_NE(js.find("\\u003c/script>"), std::string::npos);
  EXPECT_NE(js.find("发送"), std::string::npos);
  EXPECT_NE(js.find("attachShadow"), std::string::npos);
  EXPECT_EQ(js.find("challenges.cloudflare.com/turnstile/v0/api.js"),
            js.rfind("challenges.cloudflare.com"));  // the one external URL, used only with a key
  EXPECT_LT(js.size(), 16u * 1024);
  EXPECT_EQ(UiTexts("th_TH").at("send").as_string(), "Send");  // no texts: English
  EXPECT_EQ(UiTexts("zh_Hant").at("send").as_string(), "傳送");
  EXPECT_EQ(UiTexts("ja_JP").size(), UiTexts("en_US").size());
}

TEST(WebPageAssets, PageAndSnippet) {
  WidgetSettings s{"A & B", "ja_JP", "0x4AAA"};
  const std::string html = RenderChatPage(s, "widget.js");
  EXPECT_NE(html.find("<html lang=\"ja\">"), std::string::npos);
  EXPECT_NE(html.find("<title>A &amp; B</title>"), std::string::npos);
  EXPECT_NE(html.find("<script src=\"widget.js\" data-mode=\"page\"></script>"), std::string::npos);
  EXPECT_EQ(EmbedSnippet("https://x.example/bots/u/widget.js"),
            "<script src=\"https://x.example/bots/u/widget.js\" async></script>");
  EXPECT_NE(ChatPagePolicy(true).find("challenges.cloudflare.com"), std::string::npos);
  EXPECT_EQ(ChatPagePolicy(false).find("cloudflare"), std::string::npos);
}

// The adapter, in process: sockets it takes, the idle bound on the injected clock, the stop, and
// the Turnstile path against a scripted siteverify.
class ThreadSafeSocket : public domain::PlatformSocket {
 public:
  void SendText(std::string text) override {
    std::lock_guard lock(mu_);
    sent_.push_back(std::move(text));
  }
  void Close(int code, std::string) override { closed_ = code; }
  std::vector<std::string> Sent() {
    std::lock_guard lock(mu_);
    return sent_;
  }
  int closed() const { return closed_; }

 private:
  std::mutex mu_;
  std::vector<std::string> sent_;
  std::atomic<int> closed_{0};
};

domain::PlatformCall SocketCall(std::string_view visitor, std::string ticket = {}) {
  domain::PlatformCall call;
  call.method = "GET";
  call.path = "/ws";
  call.query = {{"visitor", std::string(visitor)}};
  if (!ticket.empty()) call.query.emplace_back("ticket", std::move(ticket));
  call.remote_address = "198.51.100.4";
  return call;
}

TEST(WebPageAdapter, IdleSocketsCloseAndStopClosesTheRestWithoutLaterHostCalls) {
  test::IoThreads io;
  test::RecordingHost host;
  util::SimulatedClock clock;
  auto http = std::make_shared<test::ScriptedHttp>(
      [](const net::HttpRequest&) { return test::Reply(500, ""); });
  auto adapter = MakeWebPageAdapter(
      test::HttpAdapterContext(util::JsonObject{{"title", "T"}}, io, http, clock, host, "bot-1"));
  adapter->Start();
  ASSERT_EQ(host.Read([&] { return host.connected.size(); }), 1u);
  auto quiet = std::make_shared<ThreadSafeSocket>();
  auto busy = std::make_shared<ThreadSafeSocket>();
  auto quiet_handlers = adapter->AcceptSocket(SocketCall(kVisitor), quiet);
  ASSERT_TRUE(quiet_handlers);
  auto busy_handlers =
      adapter->AcceptSocket(SocketCall("1f8fad5b-d9cb-469f-a165-70867728950e"), busy);
  ASSERT_TRUE(busy_handlers);
  ASSERT_EQ(quiet->Sent().size(), 1u);  // the ready frame
  EXPECT_TRUE(quiet->Sent()[0].starts_with(R"({"type":"ready")"));

  clock.Advance(9min);
  busy_handlers->on_text(R"({"type":"ping"})");
  clock.Advance(90s);
  EXPECT_EQ(quiet->closed(), 1000);
  EXPECT_EQ(busy->closed(), 0);

  busy_handlers->on_text(R"({"type":"message","text":"hi"})");
  ASSERT_EQ(host.Read([&] { return host.messages.size(); }), 1u);
  EXPECT_EQ(host.Read([&] { return host.messages[0].chat_id; }),
            "1f8fad5b-d9cb-469f-a165-70867728950e");

  ASSERT_TRUE(test::StopAndWait(*adapter));
  host.stopped = true;
  EXPECT_EQ(busy->closed(), 1001);
  busy_handlers->on_text(R"({"type":"message","text":"too late"})");
  busy_handlers->on_close();
  quiet_handlers->on_close();
  EXPECT_EQ(host.after_stop_calls, 0);
  EXPECT_FALSE(adapter->AcceptSocket(SocketCall(kVisitor), quiet));
}

TEST(WebPageAdapter, TurnstileTokensAreCheckedWithSiteverifyBeforeAnySocket) {
  test::IoThreads io;
  test::RecordingHost host;
  util::SimulatedClock clock;
  std::atomic<bool> pass{false};
  auto http = std::make_shared<test::ScriptedHttp>([&pass](const net::HttpRequest&) {
    return test::Reply(200, pass ? R"({"success":true,"error-codes":[]})"
                                 : R"({"success":false,"error-codes":["invalid-input-response"]})");
  });
  util::JsonObject config{{"turnstile_site_key", "0xSITE"},
                          {"turnstile_secret_key", "0xSECRET"},
                          {"api_base_url", "https://verify.test/"}};
  auto adapter =
      MakeWebPageAdapter(test::HttpAdapterContext(config, io, http, clock, host, "bot-1"));
  adapter->Start();
  auto socket = std::make_shared<ThreadSafeSocket>();
  auto refused = adapter->AcceptSocket(SocketCall(kVisitor), socket);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, util::ErrorCode::kPermissionDenied);

  domain::PlatformCall session;
  session.method = "POST";
  session.path = "/session";
  session.remote_address = "198.51.100.4";
  session.body = std::string(R"({"visitor":")") + std::string(kVisitor) + R"(","token":"t+1"})";
  auto answer = test::CallWebhook(*adapter, session);
  EXPECT_EQ(answer.status, 403) << answer.body;
  EXPECT_NE(answer.body.find("invalid-input-response"), std::string::npos);
  auto requests = http->Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].url, "https://verify.test/turnstile/v0/siteverify");
  EXPECT_EQ(test::HeaderOf(requests[0], "Content-Type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(requests[0].body, "secret=0xSECRET&response=t%2B1&remoteip=198.51.100.4");
  for (const auto& line : host.Read([&] { return host.logs; })) {
    EXPECT_EQ(line.find("0xSECRET"), std::string::npos) << line;
  }

  pass = true;
  answer = test::CallWebhook(*adapter, session);
  ASSERT_EQ(answer.status, 200) << answer.body;
  auto ticket = util::ParseJson(answer.body)->as_object().at("ticket").as_string();
  EXPECT_TRUE(adapter->AcceptSocket(SocketCall(kVisitor, std::string(ticket)), socket));
  EXPECT_TRUE(host.Read([&] { return host.messages.empty(); }));

  // The widget draws the challenge with the site key; the page allows Cloudflare's script.
  domain::PlatformCall js;
  js.method = "GET";
  js.path = "/widget.js";
  EXPECT_NE(test::CallWebhook(*adapter, js).body.find(R"("siteKey":"0xSITE")"), std::string::npos);
  EXPECT_TRUE(test::StopAndWait(*adapter));
}

}  // namespace
}  // namespace sb::platforms::web_page
