// The Satori adapter's pure parts: message elements both ways (the escapes and elements of the
// spec's protocol/message.html and elements.html), signals, READY's logins, message-created
// events as the spec's events.html and the reference SDK (satorijs/satori packages/server) send
// them, the API bodies and answers, where the config puts the server, and CheckDeliverable.
#include <gtest/gtest.h>

#include <string>

#include "platforms/satori/satori_codec.hpp"
#include "platforms/satori/satori_elements.hpp"
#include "util/json.hpp"

namespace sb::platforms::satori {
namespace {

using domain::ElementType;
using domain::MessageChain;
using domain::MessageElement;

util::JsonObject Object(std::string_view text) { return util::ParseJson(text)->get_object(); }

MessageElement Of(ElementType type, std::string id = {}) {
  MessageElement e;
  e.type = type;
  e.id = std::move(id);
  return e;
}

MessageElement Plain(std::string text) {
  MessageElement e;
  e.text = std::move(text);
  return e;
}

TEST(SatoriElements, EscapesTheFourCharactersOfTheSpec) {
  EXPECT_EQ(Escape(R"(a & b < c > d "e" 'f')"), "a &amp; b &lt; c &gt; d &quot;e&quot; 'f'");
  EXPECT_EQ(Unescape("&amp;lt; &lt;&gt;&quot;&apos; &#39;&#x27;&#X41; &unknown; & &#0; &#xD800;"),
            "&lt; <>\"' ''A &unknown; & &#0; &#xD800;");
  EXPECT_EQ(Unescape("&#20320;&#x597D;"), "你好");
  EXPECT_EQ(Unescape(Escape("<at id=\"1\"/> & more")), "<at id=\"1\"/> & more");
}

TEST(SatoriElements, DecodesTextMentionsAndMedia) {
  MessageChain chain = DecodeContent(
      R"(<at id="42" name="bot"/> hi &amp; bye<img src="https://x.test/a.png?a=1&amp;b=2"/>)"
      R"(<at type="all"/><audio src='https://x.test/v.mp3'/><file src="https://x.test/f" title="f.pdf"/>)");
  ASSERT_EQ(chain.size(), 6u);
  EXPECT_EQ(chain[0].type, ElementType::kAt);
  EXPECT_EQ(chain[0].target, "42");
  EXPECT_EQ(chain[1].type, ElementType::kPlain);
  EXPECT_EQ(chain[1].text, " hi & bye");
  EXPECT_EQ(chain[2].type, ElementType::kImage);
  EXPECT_EQ(chain[2].url, "https://x.test/a.png?a=1&b=2");
  EXPECT_EQ(chain[3].type, ElementType::kAtAll);
  EXPECT_EQ(chain[4].type, ElementType::kVoice);
  EXPECT_EQ(chain[4].url, "https://x.test/v.mp3");
  EXPECT_EQ(chain[5].type, ElementType::kFile);
  EXPECT_EQ(chain[5].name, "f.pdf");
}

TEST(SatoriElements, QuotesAuthorsStylesAndUnknownElements) {
  MessageChain chain = DecodeContent(
      R"(<quote id="m1"><author id="7" name="ann"/>old text</quote><b>bold</b> and )"
      R"(<i>it</i><br/><p>para</p><!-- note --><qq:marketface id="1">[face]</qq:marketface>)"
      R"(<sharp id="c1" name="general"/> <at name="zed"/>)");
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0].type, ElementType::kQuote);
  EXPECT_EQ(chain[0].id, "m1");
  EXPECT_EQ(chain[0].text, "old text");  // the quoted message, without its author
  EXPECT_EQ(chain[1].text, "bold and it\npara\n[face]#general @zed");
}

TEST(SatoriElements, AQuotesTextIsBoundedAndSelfClosingQuotesHaveNone) {
  std::string long_quote = "<quote id=\"q\">";
  for (int i = 0; i < 3000; ++i) long_quote += "引&amp;";
  long_quote += "</quote>ask";
  MessageChain chain = DecodeContent(long_quote);
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_LE(chain[0].text.size(), domain::kMaxQuotedTextBytes);
  EXPECT_TRUE(chain[0].text.starts_with("引&引&"));
  EXPECT_EQ(chain[1].text, "ask");
  chain = DecodeContent(R"(<quote id="q"/>hi)");
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0].text, "");
  EXPECT_EQ(chain[1].text, "hi");
}

TEST(SatoriElements, MalformedTagsStayText) {
  MessageChain chain = DecodeContent(R"(1 < 2 and <img src="unterminated/> </b> a<>b <3)");
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].text, R"(1 < 2 and <img src="unterminated/>  a<>b <3)");
  EXPECT_TRUE(DecodeContent("").empty());
  EXPECT_TRUE(DecodeContent("<img/>").empty());  // no src: nothing to show
  // A stray end tag does not end an open quote early, and an unclosed quote hides the rest.
  chain = DecodeContent("<quote id=\"q\">x</b>y");
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].type, ElementType::kQuote);
}

TEST(SatoriElements, EncodesAChainWithEscapes) {
  MessageChain chain;
  chain.push_back(Plain("a <b> & \"c\" "));
  MessageElement at = Of(ElementType::kAt);
  at.target = "u\"1";
  chain.push_back(at);
  chain.push_back(Of(ElementType::kAtAll));
  MessageElement image = Of(ElementType::kImage);
  image.url = "https://x.test/a.png?a=1&b=2";
  chain.push_back(image);
  MessageElement raw = Of(ElementType::kImage);
  raw.base64 = "iVBORw0KGgo=";
  chain.push_back(raw);
  MessageElement file = Of(ElementType::kFile);
  file.url = "https://x.test/f";
  file.name = "a&b.pdf";
  chain.push_back(file);
  MessageElement quote = Of(ElementType::kQuote);
  quote.id = "m1";
  chain.push_back(quote);
  chain.push_back(Of(ElementType::kSource, "ignored"));
  EXPECT_EQ(EncodeContent(chain),
            "a &lt;b&gt; &amp; &quot;c&quot; <at id=\"u&quot;1\"/><at type=\"all\"/>"
            "<img src=\"https://x.test/a.png?a=1&amp;b=2\"/>"
            "<img src=\"data:image/png;base64,iVBORw0KGgo=\"/>"
            "<file src=\"https://x.test/f\" title=\"a&amp;b.pdf\"/><quote id=\"m1\"/>");
  // What is encoded decodes back.
  MessageChain back = DecodeContent(EncodeContent(chain));
  ASSERT_GE(back.size(), 2u);
  EXPECT_EQ(back[0].text, "a <b> & \"c\" ");
  EXPECT_EQ(back[1].target, "u\"1");
}

TEST(SatoriSignals, DecodeAndEncode) {
  auto ready = DecodeSignal(R"({"op":4,"body":{"logins":[]}})");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->op, kOpReady);
  auto pong = DecodeSignal(R"({"op":2})");
  ASSERT_TRUE(pong);
  EXPECT_TRUE(pong->body.empty());
  for (std::string_view bad :
       {"{", "[]", R"({"op":"0"})", R"({"op":0,"body":[]})", R"({"op":-1})"}) {
    auto r = DecodeSignal(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(EncodeIdentify("tok", std::nullopt), R"({"op":3,"body":{"token":"tok"}})");
  EXPECT_EQ(EncodeIdentify("", 12), R"({"op":3,"body":{"sn":12}})");
  EXPECT_EQ(EncodePing(), R"({"op":1,"body":{}})");
}

TEST(SatoriLogins, PicksTheConfiguredPlatform) {
  auto logins = DecodeLogins(Object(R"({"logins":[
    {"sn":1,"platform":"discord","user":{"id":"100","name":"dc"},"status":1,"adapter":"discord"},
    {"sn":2,"platform":"llonebot","user":{"id":"200","name":"qq"},"status":1},
    {"sn":3,"status":0}]})"));
  ASSERT_EQ(logins.size(), 2u);
  auto qq = PickLogin(logins, "llonebot");
  ASSERT_TRUE(qq);
  EXPECT_EQ(qq->user_id, "200");
  EXPECT_EQ(qq->user_name, "qq");
  auto none = PickLogin(logins, "telegram");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, util::ErrorCode::kNotFound);
  EXPECT_NE(none.error().message.find("discord, llonebot"), std::string::npos);
  EXPECT_FALSE(PickLogin(logins, ""));  // two logins: which one is not clear
  EXPECT_TRUE(PickLogin({logins[0]}, ""));
}

const Login kSelf{"llonebot", "200", "qq"};

TEST(SatoriEvents, DirectMessageIsPrivateWithTheUserAsChat) {
  auto event = DecodeEvent(Object(R"({"sn":5,"type":"message-created","timestamp":1700000000000,
    "login":{"sn":2,"platform":"llonebot","user":{"id":"200"}},
    "channel":{"id":"private:300","type":1},"user":{"id":"300","name":"ann","nick":"Annie"},
    "message":{"id":"m9","content":"hello &amp; hi"}})"),
                           kSelf);
  ASSERT_TRUE(event);
  EXPECT_EQ(event->sn, 5);
  ASSERT_TRUE(event->message);
  const auto& m = *event->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kPerson);
  EXPECT_EQ(m.chat_id, "300");
  EXPECT_EQ(m.sender_id, "300");
  EXPECT_EQ(m.sender_name, "Annie");
  EXPECT_EQ(m.message_id, "m9");
  EXPECT_EQ(event->channel_id, "private:300");
  ASSERT_EQ(m.chain.size(), 2u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[0].id, "m9");
  EXPECT_EQ(m.chain[1].text, "hello & hi");
}

TEST(SatoriEvents, GroupMessageIsTheChannelWithMentions) {
  auto event = DecodeEvent(Object(R"({"sn":6,"type":"message-created",
    "login":{"platform":"llonebot","user":{"id":"200"}},
    "channel":{"id":"g1","type":0},"guild":{"id":"g1","name":"G"},
    "member":{"nick":"Boss"},"user":{"id":"301","name":"bob"},
    "message":{"id":"m10","content":"<at id=\"200\"/> are you there"}})"),
                           kSelf);
  ASSERT_TRUE(event && event->message);
  const auto& m = *event->message;
  EXPECT_EQ(m.chat_type, domain::TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "g1");
  EXPECT_EQ(m.sender_id, "301");
  EXPECT_EQ(m.sender_name, "Boss");
  ASSERT_EQ(m.chain.size(), 3u);
  EXPECT_EQ(m.chain[1].type, ElementType::kAt);
  EXPECT_EQ(m.chain[1].target, "200");
  // A guild without channel.type is a group too (LangBot's rule); numeric ids are read as text.
  auto guild = DecodeEvent(Object(R"({"type":"message-created","platform":"llonebot",
    "self_id":"200","channel":{"id":77},"guild":{"id":"g"},"user":{"id":301},
    "message":{"id":1,"content":"x"}})"),
                           kSelf);
  ASSERT_TRUE(guild && guild->message);
  EXPECT_EQ(guild->message->chat_type, domain::TargetType::kGroup);
  EXPECT_EQ(guild->message->chat_id, "77");
  EXPECT_EQ(guild->message->message_id, "1");
}

TEST(SatoriEvents, SkipsOwnOtherAccountsOtherTypesAndEmptyMessages) {
  auto own = DecodeEvent(Object(R"({"sn":7,"type":"message-created","login":{"platform":
    "llonebot","user":{"id":"200"}},"channel":{"id":"g1","type":0},"user":{"id":"200"},
    "message":{"id":"m","content":"echo"}})"),
                         kSelf);
  ASSERT_TRUE(own);
  EXPECT_FALSE(own->message);
  EXPECT_EQ(own->sn, 7);
  auto other = DecodeEvent(Object(R"({"type":"message-created","login":{"platform":"discord",
    "user":{"id":"100"}},"channel":{"id":"g1","type":0},"user":{"id":"5"},
    "message":{"id":"m","content":"x"}})"),
                           kSelf);
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->message);
  auto deleted =
      DecodeEvent(Object(R"({"sn":8,"type":"message-deleted","channel":{"id":"g"}})"), kSelf);
  ASSERT_TRUE(deleted);
  EXPECT_FALSE(deleted->message);
  EXPECT_EQ(deleted->type, "message-deleted");
  auto empty = DecodeEvent(Object(R"({"type":"message-created","channel":{"id":"g","type":0},
    "user":{"id":"5"},"message":{"id":"m","content":"<img/>"}})"),
                           kSelf);
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->message);
}

TEST(SatoriEvents, MalformedMessageEventsNameTheField) {
  struct Case {
    std::string_view body;
    std::string_view field;
  } cases[] = {
      {R"({"type":"message-created","channel":{"id":"g"},"user":{"id":"1"}})", "event.message"},
      {R"({"type":"message-created","user":{"id":"1"},"message":{}})", "event.channel.id"},
      {R"({"type":"message-created","channel":{"id":"g"},"message":{}})", "event.user.id"},
  };
  for (const Case& c : cases) {
    auto r = DecodeEvent(Object(c.body), kSelf);
    ASSERT_FALSE(r) << c.body;
    EXPECT_EQ(r.error().code, util::ErrorCode::kInvalidArgument);
    EXPECT_TRUE(r.error().message.starts_with(c.field)) << r.error().message;
  }
}

TEST(SatoriApiCodec, BodiesAndAnswers) {
  EXPECT_EQ(EncodeMessageCreate("c1", "<at id=\"1\"/>hi"),
            R"({"channel_id":"c1","content":"<at id=\"1\"/>hi"})");
  EXPECT_EQ(EncodeDirectChannelCreate("300"), R"({"user_id":"300"})");
  EXPECT_EQ(*DecodeCreatedMessageId(R"([{"id":"a","content":"x"},{"id":"b"}])"), "b");
  EXPECT_EQ(*DecodeCreatedMessageId("[]"), "");
  EXPECT_EQ(*DecodeCreatedMessageId(R"({"id":"c"})"), "c");
  EXPECT_EQ(DecodeCreatedMessageId("oops").error().code, util::ErrorCode::kUpstreamFailed);
  EXPECT_EQ(*DecodeChannelId(R"({"id":"private:300","type":1})"), "private:300");
  EXPECT_EQ(DecodeChannelId("{}").error().code, util::ErrorCode::kUpstreamFailed);
}

TEST(SatoriConfig, EndpointsFromTheFieldsLangBotUses) {
  auto e = EndpointsFromConfig(Object(R"({"satori_api_base_url":"http://h:1/v1/",
    "satori_endpoint":"ws://h:2/v1/events","host":"x","port":3})"));
  EXPECT_EQ(e.api, "http://h:1/v1");
  EXPECT_EQ(e.events, "ws://h:2/v1/events");
  e = EndpointsFromConfig(Object(R"({"host":"10.0.0.2","port":"5601"})"));
  EXPECT_EQ(e.api, "http://10.0.0.2:5601/v1");
  EXPECT_EQ(e.events, "ws://10.0.0.2:5601/v1/events");
  e = EndpointsFromConfig(Object(R"({"api_base_url":"https://sat.example/base/",
    "satori_api_base_url":"http://h:1/v1"})"));
  EXPECT_EQ(e.api, "https://sat.example/base/v1");
  EXPECT_EQ(e.events, "wss://sat.example/base/v1/events");
}

TEST(SatoriDeliverable, RefusesWhatSatoriCannotCarry) {
  domain::OutgoingMessage m;
  m.target_type = domain::TargetType::kGroup;
  m.target_id = "g1";
  m.chain.push_back(Plain("hi"));
  EXPECT_TRUE(CheckDeliverable(m));
  m.target_id = "";
  EXPECT_FALSE(CheckDeliverable(m));
  m.target_id = "a\nb";
  EXPECT_FALSE(CheckDeliverable(m));
  m.target_id = "g1";
  m.chain = {Of(ElementType::kImage)};
  auto r = CheckDeliverable(m);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().message.starts_with("message_chain[0]"));
  m.chain = {Of(ElementType::kFile)};
  m.chain[0].base64 = "AAAA";
  EXPECT_FALSE(CheckDeliverable(m));
  m.chain = {Of(ElementType::kQuote, "m")};
  EXPECT_FALSE(CheckDeliverable(m));  // nothing to show
}

}  // namespace
}  // namespace sb::platforms::satori
