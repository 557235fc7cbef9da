// The Discord codec: gateway frames, READY and MESSAGE_CREATE as recorded from the documentation's
// examples (developers/events/gateway-events.mdx, resources/message.mdx), malformed frames, the
// close-code policy, REST errors and Create Message calls (JSON and multipart).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platforms/common/text_units.hpp"
#include "platforms/discord/discord_codec.hpp"
#include "util/json.hpp"

namespace sb::platforms::discord {
namespace {

using domain::ElementType;
using domain::MessageElement;
using domain::OutgoingMessage;
using domain::TargetType;
using util::ErrorCode;
using util::Json;

constexpr const char* kBot = "1100000000000000001";

Json Parse(std::string_view text) {
  auto parsed = util::ParseJson(text);
  EXPECT_TRUE(parsed.has_value()) << text;
  return parsed ? *parsed : Json(nullptr);
}

MessageElement Plain(std::string text) {
  MessageElement e;
  e.type = ElementType::kPlain;
  e.text = std::move(text);
  return e;
}

MessageElement Element(ElementType type) {
  MessageElement e;
  e.type = type;
  return e;
}

OutgoingMessage To(TargetType type, std::string id, domain::MessageChain chain) {
  OutgoingMessage m;
  m.target_type = type;
  m.target_id = std::move(id);
  m.chain = std::move(chain);
  return m;
}

// --- gateway frames ---

TEST(DiscordFrames, HelloDispatchAndAck) {
  auto hello = DecodeFrame(R"({"op":10,"d":{"heartbeat_interval":45000},"s":null,"t":null})");
  ASSERT_TRUE(hello) << hello.error().message;
  EXPECT_EQ(hello->op, kOpHello);
  EXPECT_FALSE(hello->s);
  EXPECT_EQ(DecodeHello(hello->d).value(), std::chrono::milliseconds(45000));

  auto ack = DecodeFrame(R"({"op":11})");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->op, kOpHeartbeatAck);
  EXPECT_TRUE(ack->d.is_null());

  auto dispatch = DecodeFrame(R"({"op":0,"d":{},"s":42,"t":"GUILD_CREATE"})");
  ASSERT_TRUE(dispatch);
  EXPECT_EQ(dispatch->s, 42);
  EXPECT_EQ(dispatch->t, "GUILD_CREATE");

  auto invalid = DecodeFrame(R"({"op":9,"d":false,"s":null,"t":null})");
  ASSERT_TRUE(invalid);
  EXPECT_FALSE(DecodeInvalidSession(invalid->d));
  EXPECT_TRUE(DecodeInvalidSession(Parse("true")));
  EXPECT_FALSE(DecodeInvalidSession(Parse("\"true\"")));
}

TEST(DiscordFrames, MalformedFramesAreRefusedNamingTheProblem) {
  for (const char* bad : {"", "not json", "[1,2]", "42", R"({"d":{}})", R"({"op":"10"})",
                          R"({"op":1.5})", R"({"op":-1})", R"({"op":0,"s":"7"})",
                          R"({"op":0,"s":1,"t":5})", "{\"op\":0,\"d\":{\"x\":\"\xff"}) {
    auto frame = DecodeFrame(bad);
    ASSERT_FALSE(frame) << bad;
    EXPECT_EQ(frame.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_NE(DecodeFrame("not json").error().message.find("not JSON"), std::string::npos);
  EXPECT_NE(DecodeFrame(R"({"op":"10"})").error().message.find("op"), std::string::npos);
}

TEST(DiscordFrames, HelloIntervalBounds) {
  EXPECT_FALSE(DecodeHello(Parse(R"({"heartbeat_interval":0})")));
  EXPECT_FALSE(DecodeHello(Parse(R"({"heartbeat_interval":-5})")));
  EXPECT_FALSE(DecodeHello(Parse(R"({"heartbeat_interval":86400000})")));
  EXPECT_FALSE(DecodeHello(Parse(R"({"heartbeat_interval":"45000"})")));
  EXPECT_FALSE(DecodeHello(Parse("null")));
  EXPECT_EQ(DecodeHello(Parse(R"({"heartbeat_interval":41250.0})")).value().count(), 41250);
}

TEST(DiscordFrames, OutgoingFramesMatchTheDocumentedShapes) {
  EXPECT_EQ(Parse(EncodeHeartbeat(std::nullopt)), Parse(R"({"op":1,"d":null})"));
  EXPECT_EQ(Parse(EncodeHeartbeat(251)), Parse(R"({"op":1,"d":251})"));

  Json identify = Parse(EncodeIdentify("tok.en"));
  EXPECT_EQ(identify.at("op"), 2);
  EXPECT_EQ(identify.at("d").at("token"), "tok.en");
  // GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT
  EXPECT_EQ(identify.at("d").at("intents").as_int64(), 1 + 512 + 4096 + 32768);
  EXPECT_TRUE(identify.at("d").at("properties").at("os").is_string());
  EXPECT_TRUE(identify.at("d").at("properties").at("browser").is_string());
  EXPECT_TRUE(identify.at("d").at("properties").at("device").is_string());

  EXPECT_EQ(Parse(EncodeResume("tok", "sess", 1337)),
            Parse(R"({"op":6,"d":{"token":"tok","session_id":"sess","seq":1337}})"));
  EXPECT_EQ(Parse(EncodeResume("tok", "sess", std::nullopt)).at("d").at("seq"), nullptr);
}

TEST(DiscordFrames, ReadyGivesTheBotAndTheResumeUrl) {
  // gateway-events.mdx, Ready, trimmed to the fields the adapter reads plus some it ignores.
  auto ready = DecodeReady(Parse(R"({
    "v": 10,
    "user": {"id": "1100000000000000001", "username": "switchboard", "discriminator": "0",
             "global_name": null, "avatar": null, "bot": true},
    "guilds": [{"id": "41771983423143937", "unavailable": true}],
    "session_id": "9a2fd2c3bd4b1fd5d3f7e1fe3bd2e3a5",
    "resume_gateway_url": "wss://gateway-us-east1-b.discord.gg",
    "shard": [0, 1],
    "application": {"id": "1100000000000000001", "flags": 0}})"));
  ASSERT_TRUE(ready) << ready.error().message;
  EXPECT_EQ(ready->user_id, kBot);
  EXPECT_EQ(ready->username, "switchboard");
  EXPECT_EQ(ready->session_id, "9a2fd2c3bd4b1fd5d3f7e1fe3bd2e3a5");
  EXPECT_EQ(ready->resume_gateway_url, "wss://gateway-us-east1-b.discord.gg");

  auto no_user = DecodeReady(Parse(R"({"session_id":"s"})"));
  ASSERT_FALSE(no_user);
  EXPECT_NE(no_user.error().message.find("d.user"), std::string::npos);
  auto no_session = DecodeReady(Parse(R"({"user":{"id":"1"}})"));
  ASSERT_FALSE(no_session);
  EXPECT_NE(no_session.error().message.find("session_id"), std::string::npos);
  // A resume URL that is not a WebSocket URL is not followed.
  auto odd = DecodeReady(
      Parse(R"({"user":{"id":"1"},"session_id":"s","resume_gateway_url":"http://evil"})"));
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->resume_gateway_url, "");
}

TEST(DiscordGateway, GetGatewayBotAndTheConnectUrl) {
  // gateway.mdx, Get Gateway Bot example.
  auto bot = DecodeGatewayBot(R"({"url":"wss://gateway.discord.gg","shards":9,
      "session_start_limit":{"total":1000,"remaining":999,"reset_after":14400000,
      "max_concurrency":1}})");
  ASSERT_TRUE(bot);
  EXPECT_EQ(GatewayConnectUrl(bot->url), "wss://gateway.discord.gg/?v=10&encoding=json");
  EXPECT_EQ(bot->remaining, 999);
  EXPECT_EQ(bot->reset_after, std::chrono::milliseconds(14400000));
  auto no_limit = DecodeGatewayBot(R"({"url":"ws://g","session_start_limit":{"remaining":"0"}})");
  ASSERT_TRUE(no_limit);
  EXPECT_FALSE(no_limit->remaining);
  EXPECT_EQ(GatewayConnectUrl("ws://127.0.0.1:4000/"), "ws://127.0.0.1:4000/?v=10&encoding=json");
  EXPECT_EQ(GatewayConnectUrl("wss://g.example/?v=9"), "wss://g.example/?v=10&encoding=json");
  EXPECT_EQ(DecodeGatewayBot(R"({"url":"https://x"})").error().code, ErrorCode::kUpstreamFailed);
  EXPECT_FALSE(DecodeGatewayBot("<html>"));
}

TEST(DiscordGateway, ClosePolicy) {
  for (int code : {4004, 4010, 4011, 4012, 4013, 4014}) {
    EXPECT_EQ(ClassifyClose(code), CloseAction::kFatal) << code;
  }
  for (int code : {4007, 4009, 4003, 1000}) {
    EXPECT_EQ(ClassifyClose(code), CloseAction::kIdentify) << code;
  }
  for (int code : {1006, 4000, 4001, 4002, 4008, 1011}) {
    EXPECT_EQ(ClassifyClose(code), CloseAction::kResume) << code;
  }
  EXPECT_NE(DescribeClose(4004, "").find("token"), std::string::npos);
  EXPECT_NE(DescribeClose(4014, "").find("MESSAGE CONTENT"), std::string::npos);
  EXPECT_NE(DescribeClose(4999, "odd\xff").find("4999"), std::string::npos);
}

// --- MESSAGE_CREATE ---

constexpr const char* kDirectMessage = R"({
  "id": "1200000000000000010", "channel_id": "1300000000000000001", "type": 0,
  "author": {"id": "2000", "username": "ann", "global_name": "Ann", "discriminator": "0"},
  "content": "hello bot", "timestamp": "2026-11-25T10:00:00.000000+00:00",
  "tts": false, "mention_everyone": false, "mentions": [], "mention_roles": [],
  "attachments": [], "embeds": [], "pinned": false})";

TEST(DiscordMessages, DirectMessageIsAPrivateChatWithTheAuthor) {
  auto decoded = DecodeMessageCreate(Parse(kDirectMessage), kBot);
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_TRUE(decoded->message);
  const auto& m = *decoded->message;
  EXPECT_EQ(m.chat_type, TargetType::kPerson);
  EXPECT_EQ(m.chat_id, "2000");
  EXPECT_EQ(m.sender_id, "2000");
  EXPECT_EQ(m.sender_name, "Ann");
  EXPECT_EQ(m.message_id, "1200000000000000010");
  EXPECT_EQ(decoded->channel_id, "1300000000000000001");
  ASSERT_EQ(m.chain.size(), 2u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[0].id, "1200000000000000010");
  EXPECT_EQ(m.chain[1].type, ElementType::kPlain);
  EXPECT_EQ(m.chain[1].text, "hello bot");
}

TEST(DiscordMessages, GuildMentionsBecomeAtElements) {
  auto decoded = DecodeMessageCreate(Parse(R"({
    "id": "1200000000000000011", "channel_id": "1300000000000000002",
    "guild_id": "1400000000000000001", "type": 0,
    "author": {"id": "2001", "username": "bob"},
    "member": {"nick": "Bobby", "roles": []},
    "content": "<@1100000000000000001> ask <@!2002> and <@&77> in <#88> <@abc> <@123",
    "mentions": [{"id": "1100000000000000001", "username": "switchboard", "bot": true},
                 {"id": "2002", "username": "cy"}],
    "attachments": []})"),
                                     kBot);
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_TRUE(decoded->message);
  const auto& m = *decoded->message;
  EXPECT_EQ(m.chat_type, TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "1300000000000000002");
  EXPECT_EQ(m.sender_id, "2001");
  EXPECT_EQ(m.sender_name, "Bobby");
  ASSERT_EQ(m.chain.size(), 5u);
  EXPECT_EQ(m.chain[1].type, ElementType::kAt);
  EXPECT_EQ(m.chain[1].target, kBot);
  EXPECT_EQ(m.chain[2].text, " ask ");
  EXPECT_EQ(m.chain[3].type, ElementType::kAt);
  EXPECT_EQ(m.chain[3].target, "2002");
  // Roles, channels and broken mentions stay text.
  EXPECT_EQ(m.chain[4].text, " and <@&77> in <#88> <@abc> <@123");
}

TEST(DiscordMessages, AReplyThatPingsTheBotCountsAsAMention) {
  auto decoded = DecodeMessageCreate(Parse(R"({
    "id": "1200000000000000012", "channel_id": "1300000000000000002",
    "guild_id": "1400000000000000001", "type": 19,
    "author": {"id": "2001", "username": "bob"}, "content": "and then?",
    "mentions": [{"id": "1100000000000000001", "username": "switchboard"}],
    "message_reference": {"type": 0, "message_id": "1200000000000000005",
                          "channel_id": "1300000000000000002"},
    "referenced_message": {"id": "1200000000000000005", "content": "earlier"}})"),
                                     kBot);
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_TRUE(decoded->message);
  const auto& chain = decoded->message->chain;
  ASSERT_EQ(chain.size(), 4u);
  EXPECT_EQ(chain[1].type, ElementType::kQuote);
  EXPECT_EQ(chain[1].id, "1200000000000000005");
  EXPECT_EQ(chain[1].text, "earlier");  // referenced_message's content goes with the quote
  EXPECT_EQ(chain[2].type, ElementType::kAt);
  EXPECT_EQ(chain[2].target, kBot);
  EXPECT_EQ(chain[3].text, "and then?");
}

TEST(DiscordMessages, AQuoteTakesTheReferencedContentOnlyWhenItIsTheQuotedMessage) {
  auto with_author = DecodeMessageCreate(Parse(R"({
    "id": "12", "channel_id": "2", "author": {"id": "4", "username": "d"}, "content": "why?",
    "message_reference": {"type": 0, "message_id": "5"},
    "referenced_message": {"id": "5", "content": "because", "author": {"id": "9"}}})"),
                                         kBot);
  ASSERT_TRUE(with_author && with_author->message);
  EXPECT_EQ(with_author->message->chain[1].text, "because");
  EXPECT_EQ(with_author->message->chain[1].target, "9");
  // Deleted (null) or another message: the quote keeps only its id.
  for (const char* ref : {R"(null)", R"({"id": "6", "content": "other"})"}) {
    auto decoded = DecodeMessageCreate(Parse(std::string(R"({
      "id": "13", "channel_id": "2", "author": {"id": "4", "username": "d"}, "content": "hm",
      "message_reference": {"type": 0, "message_id": "5"}, "referenced_message": )") +
                                             ref + "}"),
                                       kBot);
    ASSERT_TRUE(decoded && decoded->message) << ref;
    EXPECT_EQ(decoded->message->chain[1].type, ElementType::kQuote) << ref;
    EXPECT_EQ(decoded->message->chain[1].text, "") << ref;
  }
}

TEST(DiscordMessages, GuildMessageWithoutMentionHasNoAt) {
  auto decoded = DecodeMessageCreate(Parse(R"({
    "id": "1", "channel_id": "2", "guild_id": "3", "author": {"id": "4", "username": "d"},
    "content": "just chatting", "mentions": []})"),
                                     kBot);
  ASSERT_TRUE(decoded && decoded->message);
  for (const auto& e : decoded->message->chain) EXPECT_NE(e.type, ElementType::kAt);
}

TEST(DiscordMessages, AttachmentsBecomeImagesAndFiles) {
  auto decoded = DecodeMessageCreate(Parse(R"({
    "id": "1", "channel_id": "2", "author": {"id": "4", "username": "d"}, "content": "",
    "attachments": [
      {"id": "10", "filename": "cat.png", "size": 1000, "content_type": "image/png",
       "url": "https://cdn.discordapp.com/attachments/2/10/cat.png", "proxy_url": "x"},
      {"id": "11", "filename": "dog.JPG", "size": 1000,
       "url": "https://cdn.discordapp.com/attachments/2/11/dog.JPG", "proxy_url": "x"},
      {"id": "12", "filename": "notes.pdf", "size": 1000, "content_type": "application/pdf",
       "url": "https://cdn.discordapp.com/attachments/2/12/notes.pdf", "proxy_url": "x"}]})"),
                                     kBot);
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_TRUE(decoded->message);
  const auto& chain = decoded->message->chain;
  ASSERT_EQ(chain.size(), 4u);
  EXPECT_EQ(chain[1].type, ElementType::kImage);
  EXPECT_EQ(chain[1].url, "https://cdn.discordapp.com/attachments/2/10/cat.png");
  EXPECT_EQ(chain[2].type, ElementType::kImage);
  EXPECT_EQ(chain[3].type, ElementType::kFile);
  EXPECT_EQ(chain[3].name, "notes.pdf");
}

TEST(DiscordMessages, OwnBotSystemAndEmptyMessagesAreNotTaken) {
  const char* skipped[] = {
      R"({"id":"1","channel_id":"2","author":{"id":"1100000000000000001"},"content":"me"})",
      R"({"id":"1","channel_id":"2","author":{"id":"9","bot":true},"content":"other bot"})",
      R"({"id":"1","channel_id":"2","type":7,"author":{"id":"9"},"content":""})",
      R"({"id":"1","channel_id":"2","author":{"id":"9"},"content":"","embeds":[{}]})",
  };
  for (const char* text : skipped) {
    auto decoded = DecodeMessageCreate(Parse(text), kBot);
    ASSERT_TRUE(decoded) << text << ": " << decoded.error().message;
    EXPECT_FALSE(decoded->message) << text;
    EXPECT_EQ(decoded->channel_id, "2");
  }
}

TEST(DiscordMessages, MalformedEventsNameTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"[]", "d must be an object"},
      {R"({"channel_id":"2","author":{"id":"9"}})", "d.id"},
      {R"({"id":"1","author":{"id":"9"}})", "d.channel_id"},
      {R"({"id":"1","channel_id":"2"})", "d.author"},
      {R"({"id":"1","channel_id":"2","author":{"id":9}})", "d.author.id"},
      {R"({"id":"1","channel_id":"2","author":{"id":"9"},"content":5})", "d.content"},
      {R"({"id":"1","channel_id":"2","guild_id":3,"author":{"id":"9"}})", "d.guild_id"},
      {R"({"id":"1","channel_id":"2","author":{"id":"9"},"attachments":{}})", "d.attachments"},
      {R"({"id":"1","channel_id":"2","author":{"id":"9"},"attachments":[{"filename":"x"}]})",
       "url"},
      {R"({"id":"1","channel_id":"2","author":{"id":"9"},"type":"0"})", "d.type"},
  };
  for (const auto& [text, field] : cases) {
    auto decoded = DecodeMessageCreate(Parse(text), kBot);
    ASSERT_FALSE(decoded) << text;
    EXPECT_EQ(decoded.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(decoded.error().message.find(field), std::string::npos)
        << decoded.error().message << " should name " << field;
  }
}

// --- outgoing ---

TEST(DiscordOutgoing, CheckDeliverableNamesTheElement) {
  EXPECT_TRUE(CheckDeliverable(To(TargetType::kPerson, "2000", {Plain("hi")})));
  auto bad_target = CheckDeliverable(To(TargetType::kGroup, "general", {Plain("hi")}));
  ASSERT_FALSE(bad_target);
  EXPECT_NE(bad_target.error().message.find("target_id"), std::string::npos);

  MessageElement image = Element(ElementType::kImage);
  image.base64 = "!!!not base64";
  auto bad_image = CheckDeliverable(To(TargetType::kGroup, "1", {Plain("x"), image}));
  ASSERT_FALSE(bad_image);
  EXPECT_EQ(bad_image.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_image.error().message.find("message_chain[1]"), std::string::npos);

  MessageElement at = Element(ElementType::kAt);
  at.target = "bob";
  EXPECT_NE(CheckDeliverable(To(TargetType::kGroup, "1", {at})).error().message.find("At"),
            std::string::npos);
  MessageElement file = Element(ElementType::kFile);
  EXPECT_FALSE(CheckDeliverable(To(TargetType::kGroup, "1", {file})));
  EXPECT_FALSE(CheckDeliverable(To(TargetType::kGroup, "1", {Plain("  \n")})));
  EXPECT_FALSE(CheckDeliverable(To(TargetType::kGroup, "1", {})));
}

TEST(DiscordOutgoing, PlainAndAtMakeOneMessageReferencingTheOrigin) {
  MessageElement at = Element(ElementType::kAt);
  at.target = "2002";
  auto calls = EncodeOutgoing(To(TargetType::kGroup, "1300000000000000002",
                                 {at, Plain(" hello "), Element(ElementType::kAtAll)}),
                              "1200000000000000011");
  ASSERT_TRUE(calls) << calls.error().message;
  ASSERT_EQ(calls->size(), 1u);
  const auto& payload = (*calls)[0].payload;
  EXPECT_EQ(payload.at("content"), "<@2002> hello @everyone");
  EXPECT_EQ(payload.at("message_reference").at("message_id"), "1200000000000000011");
  EXPECT_EQ(payload.at("message_reference").at("fail_if_not_exists"), false);
  EXPECT_EQ(Json(payload.at("allowed_mentions")),
            Parse(R"({"parse":["users","everyone"],"replied_user":true})"));
  EXPECT_TRUE((*calls)[0].uploads.empty());
}

TEST(DiscordOutgoing, PrivateRepliesDoNotQuoteUnlessAsked) {
  auto plain = EncodeOutgoing(To(TargetType::kPerson, "2000", {Plain("hi")}), "1200");
  ASSERT_TRUE(plain);
  EXPECT_FALSE((*plain)[0].payload.contains("message_reference"));
  EXPECT_EQ(Json((*plain)[0].payload.at("allowed_mentions")),
            Parse(R"({"parse":["users"],"replied_user":true})"));
  MessageElement quote = Element(ElementType::kQuote);
  quote.id = "1199";
  auto quoted = EncodeOutgoing(To(TargetType::kPerson, "2000", {quote, Plain("hi")}), "1200");
  ASSERT_TRUE(quoted);
  EXPECT_EQ((*quoted)[0].payload.at("message_reference").at("message_id"), "1199");
}

TEST(DiscordOutgoing, LongTextIsSplitAtLineBreaksWithinTwoThousandCharacters) {
  std::string text(1500, 'a');
  text += "\n";
  text += std::string(1500, 'b');
  auto calls = EncodeOutgoing(To(TargetType::kGroup, "1", {Plain(text)}), "77");
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ(Json((*calls)[0].payload.at("content")), Json(std::string(1500, 'a')));
  EXPECT_EQ(Json((*calls)[1].payload.at("content")), Json(std::string(1500, 'b')));
  // Only the first piece replies.
  EXPECT_TRUE((*calls)[0].payload.contains("message_reference"));
  EXPECT_FALSE((*calls)[1].payload.contains("message_reference"));

  // Astral characters count two units each and are never cut in half.
  std::string emoji;
  for (int i = 0; i < 1500; ++i) emoji += "😀";
  auto split = EncodeOutgoing(To(TargetType::kGroup, "1", {Plain(emoji)}), "");
  ASSERT_TRUE(split);
  std::string joined;
  for (const auto& call : *split) {
    const std::string content(call.payload.at("content").get_string());
    EXPECT_LE(common::Utf16Length(content), kMaxContentChars);
    joined += content;
  }
  EXPECT_EQ(joined, emoji);
}

TEST(DiscordOutgoing, ImagesByUrlAreEmbedsAndBase64ImagesAreUploads) {
  MessageElement by_url = Element(ElementType::kImage);
  by_url.url = "https://example.com/cat.png";
  MessageElement inline_png = Element(ElementType::kImage);
  inline_png.base64 = "data:image/png;base64,iVBORw0KGgo=";  // the PNG signature
  auto calls = EncodeOutgoing(To(TargetType::kGroup, "1", {Plain("look"), by_url, inline_png}), "");
  ASSERT_TRUE(calls) << calls.error().message;
  ASSERT_EQ(calls->size(), 1u);
  const OutboundCall& call = (*calls)[0];
  EXPECT_EQ(call.payload.at("content"), "look");
  EXPECT_EQ(Json(call.payload.at("embeds")),
            Parse(R"([{"image":{"url":"https://example.com/cat.png"}}])"));
  EXPECT_EQ(Json(call.payload.at("attachments")), Parse(R"([{"id":0,"filename":"image0.png"}])"));
  ASSERT_EQ(call.uploads.size(), 1u);
  EXPECT_EQ(call.uploads[0].mime_type, "image/png");
  EXPECT_EQ(call.uploads[0].bytes, std::string("\x89PNG\r\n\x1a\n", 8));

  const std::string body = EncodeMultipart(call, "BOUNDARY");
  EXPECT_EQ(body.find("--BOUNDARY\r\nContent-Disposition: form-data; name=\"payload_json\"\r\n"),
            0u);
  EXPECT_NE(body.find("name=\"files[0]\"; filename=\"image0.png\"\r\nContent-Type: image/png"
                      "\r\n\r\n\x89PNG"),
            std::string::npos);
  EXPECT_TRUE(body.ends_with("--BOUNDARY--\r\n"));
}

TEST(DiscordOutgoing, MoreThanTenImagesTakeMoreMessages) {
  domain::MessageChain chain;
  for (int i = 0; i < 12; ++i) {
    MessageElement image = Element(ElementType::kImage);
    image.base64 = "iVBORw0KGgo=";
    chain.push_back(image);
  }
  auto calls = EncodeOutgoing(To(TargetType::kPerson, "5", chain), "");
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[0].uploads.size(), 10u);
  EXPECT_EQ((*calls)[1].uploads.size(), 2u);
  EXPECT_FALSE((*calls)[0].payload.contains("content"));
}

TEST(DiscordOutgoing, FileAndVoiceUrlsAreLinks) {
  MessageElement file = Element(ElementType::kFile);
  file.url = "https://example.com/a.pdf";
  MessageElement voice = Element(ElementType::kVoice);
  voice.url = "https://example.com/v.ogg";
  auto calls = EncodeOutgoing(To(TargetType::kPerson, "5", {Plain("see"), file, voice}), "");
  ASSERT_TRUE(calls);
  EXPECT_EQ((*calls)[0].payload.at("content"),
            "see\nhttps://example.com/a.pdf\nhttps://example.com/v.ogg");
}

// --- REST ---

TEST(DiscordRest, RateLimitBodyAndHeader) {
  auto limited = DecodeRestError(
      429, "2", R"({"message":"You are being rate limited.","retry_after":1.25,"global":true})");
  EXPECT_EQ(limited.status, 429);
  EXPECT_DOUBLE_EQ(limited.retry_after, 1.25);
  EXPECT_TRUE(limited.global);
  EXPECT_EQ(limited.message, "You are being rate limited.");

  auto header_only = DecodeRestError(429, "3", "<html>busy</html>");
  EXPECT_DOUBLE_EQ(header_only.retry_after, 3);
  EXPECT_EQ(header_only.message, "HTTP 429");
  EXPECT_DOUBLE_EQ(DecodeRestError(429, "soon", "").retry_after, 0);
  EXPECT_DOUBLE_EQ(DecodeRestError(429, "", R"({"retry_after":-4})").retry_after, 0);

  auto refused = DecodeRestError(403, "", R"({"message":"Missing Access","code":50001})");
  EXPECT_EQ(refused.code, 50001);
  EXPECT_EQ(refused.message, "Missing Access");
}

TEST(DiscordRest, Ids) {
  EXPECT_EQ(DecodeId(R"({"id":"1300000000000000009","type":1})").value(), "1300000000000000009");
  EXPECT_EQ(DecodeId(R"({"id":13})").error().code, ErrorCode::kUpstreamFailed);
  EXPECT_FALSE(DecodeId("nope"));
  EXPECT_TRUE(IsSnowflake("12345678901234567890"));
  EXPECT_FALSE(IsSnowflake("123456789012345678901"));
  EXPECT_FALSE(IsSnowflake("12a"));
  EXPECT_FALSE(IsSnowflake(""));
}

}  // namespace
}  // namespace sb::platforms::discord
