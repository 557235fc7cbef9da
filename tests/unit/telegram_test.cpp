// The Telegram adapter: its codec (Updates in, Bot API calls out, Markdown to MarkdownV2) as pure
// functions, and the adapter end to end against tests/fakes/fake_telegram.py, which speaks the
// Bot API as documented (long polls, 409s, 401s, webhooks, file downloads).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.hpp"
#include "platforms/common/text_units.hpp"
#include "platforms/telegram/telegram_adapter.hpp"
#include "platforms/telegram/telegram_codec.hpp"
#include "support/adapter_harness.hpp"
#include "util/json.hpp"

namespace sb::platforms::telegram {
namespace {

using common::Utf16Length;
using domain::ElementType;
using domain::MessageElement;
using domain::OutgoingMessage;
using domain::TargetType;
using util::ErrorCode;
using util::Json;
using util::JsonObject;
using namespace std::chrono_literals;

constexpr std::int64_t kBotId = 777000111;
const BotIdentity kBot{kBotId, "switch_bot"};

Json Parse(const std::string& text) {
  auto parsed = util::ParseJson(text);
  EXPECT_TRUE(parsed.has_value()) << text;
  return parsed ? *parsed : Json(nullptr);
}

// An Update holding `message_fields` plus a standard message_id, from and chat.
Json MessageUpdate(const std::string& message_fields, const std::string& chat_type = "private",
                   std::int64_t chat_id = 42) {
  return Parse(R"({"update_id":1000,"message":{"message_id":55,"date":1760000000,)"
               R"("from":{"id":42,"is_bot":false,"first_name":"Ann","last_name":"Lee",)"
               R"("username":"ann"},"chat":{"id":)" +
               std::to_string(chat_id) + R"(,"type":")" + chat_type + "\"}," + message_fields +
               "}}");
}

DecodedUpdate Decode(const Json& update) {
  auto r = DecodeUpdate(update, kBot);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : DecodedUpdate{};
}

MessageElement Plain(std::string text) {
  MessageElement e;
  e.type = ElementType::kPlain;
  e.text = std::move(text);
  return e;
}

MessageElement At(std::string target) {
  MessageElement e;
  e.type = ElementType::kAt;
  e.target = std::move(target);
  return e;
}

MessageElement Quote(std::string id) {
  MessageElement e;
  e.type = ElementType::kQuote;
  e.id = std::move(id);
  return e;
}

MessageElement Media(ElementType type, std::string url, std::string base64 = "") {
  MessageElement e;
  e.type = type;
  e.url = std::move(url);
  e.base64 = std::move(base64);
  return e;
}

OutgoingMessage Outgoing(domain::MessageChain chain, std::string target = "42",
                         TargetType type = TargetType::kPerson) {
  OutgoingMessage m;
  m.target_type = type;
  m.target_id = std::move(target);
  m.chain = std::move(chain);
  return m;
}

std::vector<OutboundCall> Encode(const OutgoingMessage& m, bool markdown = false,
                                 std::string_view reply_to = "") {
  EncodeOptions options;
  options.markdown = markdown;
  auto r = EncodeOutgoing(m, reply_to, options);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : std::vector<OutboundCall>{};
}

std::string Str(const JsonObject& o, std::string_view key) {
  const Json* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

TEST(TelegramDecode, PrivateText) {
  auto d = Decode(MessageUpdate(R"("text":"hello there")"));
  EXPECT_EQ(d.update_id, 1000);
  ASSERT_TRUE(d.message);
  const ReceivedMessage& m = *d.message;
  EXPECT_EQ(m.chat_type, TargetType::kPerson);
  EXPECT_EQ(m.chat_id, "42");
  EXPECT_EQ(m.sender_id, "42");
  EXPECT_EQ(m.sender_name, "Ann Lee");
  EXPECT_EQ(m.message_id, "55");
  ASSERT_EQ(m.chain.size(), 2u);
  EXPECT_EQ(m.chain[0].type, ElementType::kSource);
  EXPECT_EQ(m.chain[0].id, "55");
  EXPECT_EQ(m.chain[1].type, ElementType::kPlain);
  EXPECT_EQ(m.chain[1].text, "hello there");
  EXPECT_TRUE(d.files.empty());
}

TEST(TelegramDecode, SenderNameFallsBackToUsername) {
  auto d = Decode(Parse(R"({"update_id":1,"message":{"message_id":2,"from":{"id":9,)"
                        R"("first_name":"","username":"nick"},"chat":{"id":9,"type":"private"},)"
                        R"("text":"x"}})"));
  ASSERT_TRUE(d.message);
  EXPECT_EQ(d.message->sender_name, "nick");
}

// The documented example: a supergroup message addressed to the bot, CJK and an emoji after it.
TEST(TelegramDecode, GroupMentionOfTheBotBecomesAt) {
  auto d = Decode(MessageUpdate(
      R"("text":"@switch_bot 你好 👋","entities":[{"type":"mention","offset":0,"length":11}])",
      "supergroup", -1001234567890));
  ASSERT_TRUE(d.message);
  const auto& m = *d.message;
  EXPECT_EQ(m.chat_type, TargetType::kGroup);
  EXPECT_EQ(m.chat_id, "-1001234567890");
  EXPECT_EQ(m.sender_id, "42");
  ASSERT_EQ(m.chain.size(), 3u);
  EXPECT_EQ(m.chain[1].type, ElementType::kAt);
  EXPECT_EQ(m.chain[1].target, std::to_string(kBotId));
  EXPECT_EQ(m.chain[2].text, " 你好 👋");
}

// Offsets count UTF-16 units: the emoji before the mention is two of them, four UTF-8 bytes.
TEST(TelegramDecode, EntityOffsetsAreUtf16Units) {
  auto d = Decode(MessageUpdate(R"("text":"👋 hi @Switch_Bot there @other 😀 end",)"
                                R"("entities":[{"type":"mention","offset":6,"length":11},)"
                                R"({"type":"mention","offset":24,"length":6}])",
                                "group", -5));
  ASSERT_TRUE(d.message);
  const auto& c = d.message->chain;
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[1].text, "👋 hi ");
  EXPECT_EQ(c[2].type, ElementType::kAt);
  EXPECT_EQ(c[2].target, std::to_string(kBotId));
  // Someone else's mention stays text.
  EXPECT_EQ(c[3].text, " there @other 😀 end");
}

TEST(TelegramDecode, TextMentionBecomesAtOfThatUser) {
  auto d = Decode(MessageUpdate(
      R"("text":"😀😀 Bob, look","entities":[{"type":"text_mention","offset":5,"length":3,)"
      R"("user":{"id":123456789,"is_bot":false,"first_name":"Bob"}}])",
      "group", -5));
  ASSERT_TRUE(d.message);
  const auto& c = d.message->chain;
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[1].text, "😀😀 ");
  EXPECT_EQ(c[2].type, ElementType::kAt);
  EXPECT_EQ(c[2].target, "123456789");
  EXPECT_EQ(c[3].text, ", look");
}

TEST(TelegramDecode, EntitiesOutsideTheTextOrInsideAPairAreIgnored) {
  auto d =
      Decode(MessageUpdate(R"("text":"😀 hi","entities":[{"type":"mention","offset":1,"length":3},)"
                           R"({"type":"mention","offset":2,"length":40}])"));
  ASSERT_TRUE(d.message);
  ASSERT_EQ(d.message->chain.size(), 2u);
  EXPECT_EQ(d.message->chain[1].text, "😀 hi");
}

TEST(TelegramDecode, ReplyToTheBotInAGroupAddsAnAtOfTheBot) {
  const std::string reply = R"("text":"and?","reply_to_message":{"message_id":50,)"
                            R"("from":{"id":777000111,"is_bot":true,"first_name":"B"},)"
                            R"("chat":{"id":-5,"type":"group"},"text":"hi"})";
  auto group = Decode(MessageUpdate(reply, "group", -5));
  ASSERT_TRUE(group.message);
  const auto& c = group.message->chain;
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[1].type, ElementType::kQuote);
  EXPECT_EQ(c[1].id, "50");
  EXPECT_EQ(c[1].text, "hi");  // the replied-to message's text goes with the quote
  EXPECT_EQ(c[1].target, "777000111");
  EXPECT_EQ(c[2].type, ElementType::kAt);
  EXPECT_EQ(c[2].target, std::to_string(kBotId));
  EXPECT_EQ(c[3].text, "and?");

  auto direct = Decode(MessageUpdate(reply));
  ASSERT_TRUE(direct.message);
  ASSERT_EQ(direct.message->chain.size(), 3u);
  EXPECT_EQ(direct.message->chain[1].type, ElementType::kQuote);
  EXPECT_EQ(direct.message->chain[2].type, ElementType::kPlain);
}

TEST(TelegramDecode, TheQuotedTextIsTheSelectedPartElseTheTextOrCaption) {
  auto selected = Decode(
      MessageUpdate(R"("text":"which?","quote":{"text":"platform 4","position":24},)"
                    R"("reply_to_message":{"message_id":51,"chat":{"id":1,"type":"private"},)"
                    R"("text":"the train leaves from platform 4"})"));
  ASSERT_TRUE(selected.message);
  EXPECT_EQ(selected.message->chain[1].text, "platform 4");
  auto caption = Decode(MessageUpdate(
      R"("text":"nice","reply_to_message":{"message_id":52,"chat":{"id":1,"type":"private"},)"
      R"("photo":[{"file_id":"f","file_unique_id":"u","width":1,"height":1}],"caption":"a cat"})"));
  ASSERT_TRUE(caption.message);
  EXPECT_EQ(caption.message->chain[1].text, "a cat");
  EXPECT_EQ(caption.message->chain[1].target, "");  // no `from`: sender unknown
  // A long quoted text is cut at a UTF-8 boundary; a sticker has no text to quote.
  std::string long_text;
  for (int i = 0; i < 800; ++i) long_text += "文🙂";
  auto cut = Decode(MessageUpdate(
      R"("text":"tl;dr?","reply_to_message":{"message_id":53,"chat":{"id":1,"type":"private"},)"
      R"("text":")" +
      long_text + R"("})"));
  ASSERT_TRUE(cut.message);
  EXPECT_LE(cut.message->chain[1].text.size(), domain::kMaxQuotedTextBytes);
  EXPECT_TRUE(cut.message->chain[1].text.starts_with("文🙂文"));
  auto sticker = Decode(MessageUpdate(
      R"("text":"lol","reply_to_message":{"message_id":54,"chat":{"id":1,"type":"private"},)"
      R"("sticker":{"file_id":"s"}})"));
  ASSERT_TRUE(sticker.message);
  EXPECT_EQ(sticker.message->chain[1].type, ElementType::kQuote);
  EXPECT_EQ(sticker.message->chain[1].text, "");
}

TEST(TelegramDecode, CommandForTheBotIsAMentionInGroups) {
  const std::string cmd =
      R"("text":"/help@switch_bot now","entities":[{"type":"bot_command","offset":0,"length":16}])";
  auto group = Decode(MessageUpdate(cmd, "group", -5));
  ASSERT_TRUE(group.message);
  const auto& c = group.message->chain;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[1].type, ElementType::kAt);
  EXPECT_EQ(c[2].text, "/help now");

  auto direct = Decode(MessageUpdate(cmd));
  ASSERT_TRUE(direct.message);
  ASSERT_EQ(direct.message->chain.size(), 2u);
  EXPECT_EQ(direct.message->chain[1].text, "/help now");

  // Another bot's command is left alone.
  auto other = Decode(MessageUpdate(
      R"("text":"/help@other_bot","entities":[{"type":"bot_command","offset":0,"length":15}])",
      "group", -5));
  ASSERT_TRUE(other.message);
  ASSERT_EQ(other.message->chain.size(), 2u);
  EXPECT_EQ(other.message->chain[1].text, "/help@other_bot");
}

TEST(TelegramDecode, PhotoTakesTheLargestSizeAndTheCaption) {
  auto d = Decode(MessageUpdate(
      R"("caption":"what is this?","photo":[{"file_id":"small","file_unique_id":"a","width":90,)"
      R"("height":90,"file_size":1000},{"file_id":"big","file_unique_id":"b","width":1280,)"
      R"("height":1280,"file_size":90000}])"));
  ASSERT_TRUE(d.message);
  const auto& c = d.message->chain;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[1].text, "what is this?");
  EXPECT_EQ(c[2].type, ElementType::kImage);
  EXPECT_TRUE(c[2].url.empty());
  ASSERT_EQ(d.files.size(), 1u);
  EXPECT_EQ(d.files[0].element, 2u);
  EXPECT_EQ(d.files[0].file_id, "big");
  EXPECT_EQ(d.files[0].file_size, 90000);
  EXPECT_EQ(d.files[0].mime_type, "image/jpeg");
}

TEST(TelegramDecode, VoiceAndDocument) {
  auto voice = Decode(MessageUpdate(
      R"("voice":{"file_id":"v1","file_unique_id":"u","duration":3,"mime_type":"audio/ogg"})"));
  ASSERT_TRUE(voice.message);
  ASSERT_EQ(voice.message->chain.size(), 2u);
  EXPECT_EQ(voice.message->chain[1].type, ElementType::kVoice);
  ASSERT_EQ(voice.files.size(), 1u);
  EXPECT_EQ(voice.files[0].file_id, "v1");

  auto doc = Decode(
      MessageUpdate(R"("document":{"file_id":"d1","file_unique_id":"u","file_name":"report.pdf",)"
                    R"("mime_type":"application/pdf"})"));
  ASSERT_TRUE(doc.message);
  ASSERT_EQ(doc.message->chain.size(), 2u);
  EXPECT_EQ(doc.message->chain[1].type, ElementType::kFile);
  EXPECT_EQ(doc.message->chain[1].name, "report.pdf");
  EXPECT_EQ(doc.files[0].mime_type, "application/pdf");
}

TEST(TelegramDecode, UpdatesTheBotDoesNotTakeGiveNoMessage) {
  EXPECT_FALSE(Decode(Parse(R"({"update_id":3,"edited_message":{"message_id":1}})")).message);
  EXPECT_FALSE(Decode(MessageUpdate(R"("text":"news")", "channel", -100)).message);
  EXPECT_FALSE(Decode(MessageUpdate(R"("sticker":{"file_id":"s"})")).message);
  // The bot's own message.
  EXPECT_FALSE(Decode(Parse(R"({"update_id":4,"message":{"message_id":1,"from":{"id":777000111},)"
                            R"("chat":{"id":1,"type":"private"},"text":"echo"}})"))
                   .message);
}

TEST(TelegramDecode, WrongShapesNameTheField) {
  auto expect_invalid = [](const std::string& body, const std::string& field) {
    auto r = DecodeUpdate(Parse(body), kBot);
    ASSERT_FALSE(r.has_value()) << body;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(r.error().message.rfind(field, 0), 0u) << r.error().message;
  };
  expect_invalid(R"({"update_id":"x"})", "update_id");
  expect_invalid(R"({"update_id":1,"message":[]})", "message must be an object");
  expect_invalid(R"({"update_id":1,"message":{"message_id":1,"chat":{"id":"1","type":"private"}}})",
                 "message.chat.id");
  expect_invalid(R"({"update_id":1,"message":{"message_id":1,"from":{"id":2},)"
                 R"("chat":{"id":1,"type":"private"},"text":"hi",)"
                 R"("entities":[{"type":"mention","offset":"0","length":2}]}})",
                 "message.entities[0].offset");
  expect_invalid(R"({"update_id":1,"message":{"message_id":1,"from":{"id":2},)"
                 R"("chat":{"id":1,"type":"private"},"text":5}})",
                 "message.text");
  EXPECT_EQ(ReadUpdateId(Parse(R"({"update_id":7,"message":5})")), 7);
  EXPECT_FALSE(ReadUpdateId(Parse("[]")));
}

TEST(TelegramEnvelope, OkErrorAndMalformed) {
  auto ok = DecodeApiResponse(200, R"({"ok":true,"result":{"id":5,"username":"b"}})");
  ASSERT_TRUE(ok && ok->ok);
  auto bot = DecodeBotIdentity(ok->result);
  ASSERT_TRUE(bot);
  EXPECT_EQ(bot->id, 5);
  EXPECT_EQ(bot->username, "b");

  auto limited = DecodeApiResponse(
      429, R"({"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7",)"
           R"("parameters":{"retry_after":7}})");
  ASSERT_TRUE(limited);
  EXPECT_FALSE(limited->ok);
  EXPECT_EQ(limited->error_code, 429);
  EXPECT_EQ(limited->retry_after, 7);

  auto parse = DecodeApiResponse(
      400, R"({"ok":false,"error_code":400,"description":"Bad Request: can't parse entities: x"})");
  ASSERT_TRUE(parse);
  EXPECT_TRUE(IsEntityParseError(*parse));

  auto html = DecodeApiResponse(502, "<html>Bad Gateway</html>");
  ASSERT_FALSE(html);
  EXPECT_EQ(html.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_NE(html.error().message.find("502"), std::string::npos);
}

TEST(TelegramCodec, DataUrlIsStandardPaddedBase64) {
  EXPECT_EQ(DataUrl("image/png", "\xfb\xff"), "data:image/png;base64,+/8=");
  EXPECT_EQ(DataUrl("audio/ogg", "abc"), "data:audio/ogg;base64,YWJj");
}

TEST(TelegramMarkdown, EscapesEveryReservedCharacter) {
  EXPECT_EQ(EscapeMarkdownV2("1.5 + 2 = 3.5! (a) [b] {c} #d -e |f ~g >h `i _j *k \\"),
            "1\\.5 \\+ 2 \\= 3\\.5\\! \\(a\\) \\[b\\] \\{c\\} \\#d \\-e \\|f \\~g \\>h \\`i "
            "\\_j \\*k \\\\");
}

TEST(TelegramMarkdown, ConvertsCommonMarkdown) {
  EXPECT_EQ(MarkdownToMarkdownV2("**bold** and __also__"), "*bold* and *also*");
  EXPECT_EQ(MarkdownToMarkdownV2("*it* and _it_."), "_it_ and _it_\\.");
  EXPECT_EQ(MarkdownToMarkdownV2("call `a_b(1)` now"), "call `a_b(1)` now");
  EXPECT_EQ(MarkdownToMarkdownV2("see [the docs](https://x.org/a_(b))!"),
            "see [the docs](https://x.org/a_(b\\))\\!");
  EXPECT_EQ(MarkdownToMarkdownV2("# Title 1.0\ntext"), "*Title 1\\.0*\ntext");
  EXPECT_EQ(MarkdownToMarkdownV2("- one\n- two"), "• one\n• two");
  EXPECT_EQ(MarkdownToMarkdownV2("~~gone~~"), "~gone~");
  EXPECT_EQ(MarkdownToMarkdownV2("snake_case_name stays"), "snake\\_case\\_name stays");
  EXPECT_EQ(MarkdownToMarkdownV2("**unclosed bold"), "\\*\\*unclosed bold");
  EXPECT_EQ(MarkdownToMarkdownV2("```python\nprint(`x` \\ 1)\n```\nafter."),
            "```python\nprint(\\`x\\` \\\\ 1)\n```\nafter\\.");
  // A block cut by a split is closed at the end.
  EXPECT_EQ(MarkdownToMarkdownV2("```\ncode"), "```\ncode\n```");
}

TEST(TelegramEncode, PlainTextWithMentions) {
  auto calls =
      Encode(Outgoing({At("123"), Plain("hi 😀"), At("bob")}, "-100200", TargetType::kGroup));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].method, "sendMessage");
  const JsonObject& p = calls[0].params;
  EXPECT_EQ(p.at("chat_id"), Json(-100200));
  EXPECT_EQ(Str(p, "text"), "@123 hi 😀 @bob");
  EXPECT_EQ(p.if_contains("parse_mode"), nullptr);
  const auto& entities = p.at("entities").as_array();
  ASSERT_EQ(entities.size(), 1u);
  EXPECT_EQ(Str(entities[0].as_object(), "type"), "text_mention");
  EXPECT_EQ(entities[0].at("offset"), Json(0));
  EXPECT_EQ(entities[0].at("length"), Json(4));
  EXPECT_EQ(entities[0].at("user").at("id"), Json(123));
}

TEST(TelegramEncode, MentionOffsetsCountUtf16AndUseKnownNames) {
  EncodeOptions options;
  options.markdown = false;
  options.display_name = [](const std::string& id) { return id == "9" ? "Ann" : ""; };
  auto calls = EncodeOutgoing(Outgoing({Plain("👋 "), At("9"), Plain("!")}), "", options);
  ASSERT_TRUE(calls);
  const JsonObject& p = (*calls)[0].params;
  EXPECT_EQ(Str(p, "text"), "👋 @Ann !");
  const auto& e = p.at("entities").as_array()[0];
  EXPECT_EQ(e.at("offset"), Json(3));
  EXPECT_EQ(e.at("length"), Json(4));
}

TEST(TelegramEncode, MarkdownHasAPlainFallback) {
  auto calls = Encode(Outgoing({At("123"), Plain("**done** in 1.5s")}), true);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(Str(calls[0].params, "parse_mode"), "MarkdownV2");
  EXPECT_EQ(Str(calls[0].params, "text"), "[@123](tg://user?id=123) *done* in 1\\.5s");
  ASSERT_TRUE(calls[0].plain_params);
  EXPECT_EQ(Str(*calls[0].plain_params, "text"), "@123 **done** in 1.5s");
  EXPECT_EQ(calls[0].plain_params->if_contains("parse_mode"), nullptr);
}

TEST(TelegramEncode, QuoteAndGroupReplyBecomeReplyParameters) {
  auto quoted = Encode(Outgoing({Quote("77"), Plain("a")}));
  ASSERT_EQ(quoted.size(), 1u);
  EXPECT_EQ(quoted[0].params.at("reply_parameters").at("message_id"), Json(77));
  EXPECT_EQ(quoted[0].params.at("reply_parameters").at("allow_sending_without_reply"), Json(true));

  auto group = Encode(Outgoing({Plain("a"), Media(ElementType::kImage, "https://x/p.png")}, "-5",
                               TargetType::kGroup),
                      false, "31");
  ASSERT_EQ(group.size(), 2u);
  EXPECT_EQ(group[0].params.at("reply_parameters").at("message_id"), Json(31));
  EXPECT_EQ(group[1].params.if_contains("reply_parameters"), nullptr);

  auto person = Encode(Outgoing({Plain("a")}), false, "31");
  EXPECT_EQ(person[0].params.if_contains("reply_parameters"), nullptr);
}

TEST(TelegramEncode, MediaElements) {
  MessageElement file = Media(ElementType::kFile, "https://x/r.pdf");
  file.name = "r.pdf";
  MessageElement source;
  source.type = ElementType::kSource;
  source.id = "9";
  auto calls =
      Encode(Outgoing({source, Plain("look"), Media(ElementType::kImage, "https://x/p.png"),
                       Media(ElementType::kImage, "", "data:image/png;base64,iVBORw=="),
                       Media(ElementType::kVoice, "https://x/v.ogg"), file, Plain("end")},
                      "@mychannel"));
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(calls[0].method, "sendMessage");
  EXPECT_EQ(Str(calls[0].params, "chat_id"), "@mychannel");
  EXPECT_EQ(calls[1].method, "sendPhoto");
  EXPECT_EQ(Str(calls[1].params, "photo"), "https://x/p.png");
  EXPECT_EQ(calls[2].method, "sendPhoto");
  ASSERT_TRUE(calls[2].upload);
  EXPECT_EQ(calls[2].upload->field, "photo");
  EXPECT_EQ(calls[2].upload->mime_type, "image/png");
  EXPECT_EQ(calls[2].upload->filename, "image.png");
  EXPECT_EQ(calls[2].upload->bytes, "\x89PNG");
  EXPECT_EQ(calls[2].params.if_contains("photo"), nullptr);
  EXPECT_EQ(calls[3].method, "sendVoice");
  EXPECT_EQ(Str(calls[3].params, "voice"), "https://x/v.ogg");
  EXPECT_EQ(calls[4].method, "sendDocument");
  EXPECT_EQ(Str(calls[4].params, "document"), "https://x/r.pdf");
  EXPECT_EQ(Str(calls[5].params, "text"), "end");
}

TEST(TelegramEncode, LongTextIsSplitUnderTheLimit) {
  std::string text;
  for (int i = 0; i < 600; ++i) text += "line " + std::to_string(i) + " 😀\n";
  auto calls = Encode(Outgoing({Plain(text)}));
  ASSERT_GE(calls.size(), 2u);
  std::string joined;
  for (const auto& c : calls) {
    const std::string t = Str(c.params, "text");
    EXPECT_LE(Utf16Length(t), kMaxTextUnits);
    joined += (joined.empty() ? "" : "\n") + t;
  }
  EXPECT_TRUE(joined == text) << "the pieces do not give the text back";

  auto md = Encode(Outgoing({Plain(text)}), true);
  for (const auto& c : md) EXPECT_LE(Utf16Length(Str(*c.plain_params, "text")), kMaxTextUnits);
}

TEST(TelegramEncode, MultipartBody) {
  Upload upload{"photo", "image.png", "image/png", "BYTES"};
  JsonObject params{{"chat_id", 5}, {"caption", "hi"}};
  const std::string body = EncodeMultipart(params, upload, "BOUND");
  EXPECT_NE(body.find("--BOUND\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n5\r\n"),
            std::string::npos);
  EXPECT_NE(body.find("name=\"caption\"\r\n\r\nhi\r\n"), std::string::npos);
  EXPECT_NE(body.find("name=\"photo\"; filename=\"image.png\"\r\nContent-Type: image/png\r\n\r\n"
                      "BYTES\r\n--BOUND--\r\n"),
            std::string::npos);
}

TEST(TelegramCheckDeliverable, NamesTheElement) {
  auto expect_invalid = [](const OutgoingMessage& m, const std::string& start) {
    auto r = CheckDeliverable(m);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(r.error().message.rfind(start, 0), 0u) << r.error().message;
  };
  expect_invalid(Outgoing({Plain("a"), Media(ElementType::kImage, "")}), "message_chain[1]: Image");
  expect_invalid(Outgoing({Media(ElementType::kVoice, "", "%%%")}), "message_chain[0]: Voice");
  expect_invalid(Outgoing({Plain("a"), Plain("b"), Media(ElementType::kFile, "")}),
                 "message_chain[2]: File");
  expect_invalid(Outgoing({Quote("abc"), Plain("a")}), "message_chain[0]: Quote");
  expect_invalid(Outgoing({Plain("a")}, "not a chat"), "target id");
  expect_invalid(Outgoing({Plain("a")}, "12ab"), "target id");
  expect_invalid(Outgoing({Quote("1")}), "message_chain");
  EXPECT_TRUE(CheckDeliverable(Outgoing({Plain("a")}, "-100123")));
  EXPECT_TRUE(CheckDeliverable(Outgoing({Plain("a")}, "@channel_name")));
}

// The fake as a child process on a free port.
class FakeTelegram {
 public:
  FakeTelegram() {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      execlp("python3", "python3", SB_FAKE_TELEGRAM, "--port", "0", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    FILE* f = fdopen(out[0], "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
      if (std::sscanf(line, "FAKE_TELEGRAM_PORT=%d", &port_) == 1) break;
    }
    stdout_ = f;
  }
  ~FakeTelegram() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_) fclose(stdout_);
  }
  int port() const { return port_; }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  FILE* stdout_ = nullptr;
};

using test::RecordingHost;

class TelegramAdapterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fake_ = new FakeTelegram(); }
  static void TearDownTestSuite() {
    delete fake_;
    fake_ = nullptr;
  }

  void SetUp() override {
    ASSERT_GT(fake_->port(), 0) << "fake Telegram did not start";
    work_.emplace(io_.get_executor());
    for (auto& t : threads_) t = std::thread([this] { io_.run(); });
    http_ = net::MakeHttpClient(io_.get_executor(), {});
    // A token of its own per test: the fake keeps state per token.
    static std::atomic<int> counter{0};
    bot_id_ = 5000000 + counter.fetch_add(1) + getpid() % 1000 * 100;
    token_ = std::to_string(bot_id_) + ":AAH-secret_" + std::to_string(bot_id_);
  }

  void TearDown() override {
    StopAdapter();
    adapter_.reset();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }

  void MakeAdapter(const std::string& mode = "polling", std::string webhook_url = "",
                   std::string base = "") {
    AdapterContext context;
    context.bot_uuid = "bot-1";
    context.config = JsonObject{{"token", token_},
                                {"markdown_card", true},
                                {"enable-stream-reply", false},
                                {"api_base_url", base.empty() ? fake_->base() + "/" : base},
                                {"mode", mode}};
    context.webhook_url = std::move(webhook_url);
    context.executor = io_.get_executor();
    context.http = http_;
    context.clock = &clock_;
    context.host = &host_;
    adapter_ = MakeTelegramAdapter(std::move(context));
  }

  // Stops the adapter and waits for `stopped`; true when it ran exactly once.
  bool StopAdapter() {
    if (!adapter_ || stop_requested_) return true;
    stop_requested_ = true;
    auto count = std::make_shared<std::atomic<int>>(0);
    std::promise<void> done;
    auto future = done.get_future();
    adapter_->Stop([this, count, &done] {
      host_.stopped = true;
      if (count->fetch_add(1) == 0) done.set_value();
    });
    adapter_->Stop([count] { count->fetch_add(100); });  // idempotent: this one never runs
    const bool in_time = future.wait_for(8s) == std::future_status::ready;
    std::this_thread::sleep_for(50ms);
    return in_time && count->load() == 1;
  }

  std::string Control(const std::string& method, const std::string& path,
                      const std::string& body = "") {
    net::HttpRequest req;
    req.method = method;
    req.url = fake_->base() + path;
    req.body = body;
    req.headers.emplace_back("Content-Type", "application/json");
    std::promise<std::string> p;
    boost::asio::co_spawn(
        io_,
        [&]() -> boost::asio::awaitable<void> {
          auto r = co_await http_->Send(req);
          p.set_value(r ? r->body : std::string());
        },
        boost::asio::detached);
    return p.get_future().get();
  }

  JsonObject Post(const std::string& path, JsonObject body) {
    body["token"] = token_;
    Json r = Parse(Control("POST", path, util::SerializeJson(body)));
    return r.is_object() ? r.as_object() : JsonObject();
  }

  JsonObject Stats() {
    Json r = Parse(Control("GET", "/_control/stats?token=" + token_));
    return r.is_object() ? r.as_object() : JsonObject();
  }

  std::int64_t Calls(const std::string& method) {
    JsonObject stats = Stats();
    const Json* calls = stats.if_contains("calls");
    if (calls == nullptr || !calls->is_object()) return 0;
    const Json* n = calls->as_object().if_contains(method);
    return n != nullptr && n->is_int64() ? n->as_int64() : 0;
  }

  std::int64_t ActivePolls() {
    JsonObject stats = Stats();
    const Json* n = stats.if_contains("active_polls");
    return n != nullptr && n->is_int64() ? n->as_int64() : -1;
  }

  boost::json::array Sent() {
    Json r = Parse(Control("GET", "/_control/sent?token=" + token_));
    return r.is_object() ? r.at("sent").as_array() : boost::json::array();
  }

  // Polls `check` until it holds or 8 s pass.
  template <typename Check>
  bool Eventually(Check check) {
    const auto deadline = std::chrono::steady_clock::now() + 8s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (check()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  util::Result<domain::SendReceipt> SendAndWait(OutgoingMessage message,
                                                std::string reply_to = "") {
    std::promise<util::Result<domain::SendReceipt>> p;
    auto f = p.get_future();
    auto calls = std::make_shared<std::atomic<int>>(0);
    adapter_->Send(std::move(message), std::move(reply_to),
                   [&p, calls](util::Result<domain::SendReceipt> r) {
                     if (calls->fetch_add(1) == 0) p.set_value(std::move(r));
                   });
    if (f.wait_for(10s) != std::future_status::ready) {
      return util::Fail(ErrorCode::kInternal, "Send never completed");
    }
    auto r = f.get();
    EXPECT_EQ(calls->load(), 1);
    return r;
  }

  bool Connected(std::size_t times = 1) {
    return host_.WaitFor([&] { return host_.connected.size() >= times; });
  }

  std::string BotAccount() const { return std::to_string(bot_id_); }

  // Fails the test if a host text shows the token.
  void ExpectNoToken() {
    host_.Read([&] {
      for (const auto* list : {&host_.troubles, &host_.logs}) {
        for (const auto& text : *list) EXPECT_EQ(text.find(token_), std::string::npos) << text;
      }
      return 0;
    });
  }

  static FakeTelegram* fake_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread threads_[2];
  std::shared_ptr<net::HttpClient> http_;
  util::SystemClock clock_;
  RecordingHost host_;
  std::unique_ptr<PlatformAdapter> adapter_;
  bool stop_requested_ = false;
  std::int64_t bot_id_ = 0;
  std::string token_;
};

FakeTelegram* TelegramAdapterTest::fake_ = nullptr;

TEST_F(TelegramAdapterTest, ConnectsReceivesAndSends) {
  MakeAdapter();
  adapter_->Start();
  ASSERT_TRUE(Connected());
  EXPECT_EQ(host_.Read([&] { return host_.connected[0]; }), BotAccount());
  EXPECT_TRUE(Eventually([&] { return Calls("deletewebhook") == 1; }));

  Post("/_control/message", {{"text", "hello bot"}});
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  const ReceivedMessage m = host_.Read([&] { return host_.messages[0]; });
  EXPECT_EQ(m.chat_type, TargetType::kPerson);
  EXPECT_EQ(m.chat_id, "1001");
  EXPECT_EQ(m.sender_id, "1001");
  EXPECT_EQ(m.sender_name, "Tester");
  ASSERT_EQ(m.chain.size(), 2u);
  EXPECT_EQ(m.chain[1].text, "hello bot");

  auto receipt = SendAndWait(Outgoing({Plain("**Hi** there, 1.5!")}, "1001"), m.message_id);
  ASSERT_TRUE(receipt) << receipt.error().message;
  ASSERT_TRUE(receipt->message_id);
  auto sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].at("method"), Json("sendMessage"));
  EXPECT_EQ(sent[0].at("text"), Json("*Hi* there, 1\\.5\\!"));  // the fake parsed it
  EXPECT_EQ(sent[0].at("parse_mode"), Json("MarkdownV2"));
  EXPECT_EQ(std::to_string(sent[0].at("message_id").as_int64()), *receipt->message_id);

  // The update was confirmed: a later message is the only new one.
  Post("/_control/message", {{"text", "second"}});
  ASSERT_TRUE(host_.WaitFor([&] { return host_.messages.size() >= 2; }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(host_.Read([&] { return host_.messages.size(); }), 2u);
  ExpectNoToken();
}

TEST_F(TelegramAdapterTest, ConflictIsTroubleThenRecovers) {
  Post("/_control/fail", {{"method", "getUpdates"},
                          {"error_code", 409},
                          {"description",
                           "Conflict: terminated by other getUpdates request; make sure that only "
                           "one bot instance is running"},
                          {"times", 1}});
  MakeAdapter();
  adapter_->Start();
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.troubles.empty(); }));
  EXPECT_EQ(host_.Read([&] { return host_.troubles[0]; })
                .rfind("getUpdates failed: 409 Conflict: terminated by other getUpdates", 0),
            0u);
  ASSERT_TRUE(Connected(2)) << "no OnConnected after the recovery";
  Post("/_control/message", {{"text", "after"}});
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  ExpectNoToken();
}

TEST_F(TelegramAdapterTest, StopEndsPollingAndCallsStoppedOnce) {
  MakeAdapter();
  adapter_->Start();
  ASSERT_TRUE(Connected());
  ASSERT_TRUE(Eventually([&] { return ActivePolls() == 1; }));
  ASSERT_TRUE(StopAdapter());
  EXPECT_TRUE(Eventually([&] { return ActivePolls() == 0; }));
  const auto polls = Calls("getupdates");
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(Calls("getupdates"), polls);
  EXPECT_EQ(ActivePolls(), 0);
  // Nothing reaches the host after `stopped`, and a Send now is cancelled.
  Post("/_control/message", {{"text", "too late"}});
  auto r = SendAndWait(Outgoing({Plain("late")}, "1001"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(host_.after_stop_calls.load(), 0);
  adapter_.reset();  // destroying after `stopped` is safe
}

// A server that takes connections and never answers: every call stays in flight.
class SilentServer {
 public:
  SilentServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd_, 16) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
  }
  ~SilentServer() { close(fd_); }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST_F(TelegramAdapterTest, StopCancelsSendsInFlight) {
  SilentServer silent;
  ASSERT_GT(silent.port(), 0);
  MakeAdapter("polling", "", silent.base());
  adapter_->Start();  // getMe hangs too
  std::promise<util::Result<domain::SendReceipt>> p;
  auto f = p.get_future();
  adapter_->Send(Outgoing({Plain("hello")}, "1001"), "",
                 [&p](util::Result<domain::SendReceipt> r) { p.set_value(std::move(r)); });
  EXPECT_EQ(f.wait_for(300ms), std::future_status::timeout);
  ASSERT_TRUE(StopAdapter());
  ASSERT_EQ(f.wait_for(0s), std::future_status::ready) << "done must run before stopped";
  auto r = f.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(host_.after_stop_calls.load(), 0);
}

TEST_F(TelegramAdapterTest, RevokedTokenIsReportedWithoutTheToken) {
  Post("/_control/revoke", {});
  MakeAdapter();
  adapter_->Start();
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.troubles.empty(); }));
  EXPECT_EQ(host_.Read([&] { return host_.troubles[0]; }),
            "the token was refused (401 Unauthorized)");
  EXPECT_TRUE(host_.Read([&] { return host_.connected.empty(); }));
  ExpectNoToken();
}

TEST_F(TelegramAdapterTest, SendErrorsAreClassified) {
  MakeAdapter();
  adapter_->Start();
  ASSERT_TRUE(Connected());
  Post("/_control/fail", {{"method", "sendMessage"},
                          {"error_code", 403},
                          {"description", "Forbidden: bot was blocked by the user"}});
  auto blocked = SendAndWait(Outgoing({Plain("hi")}, "1001"));
  ASSERT_FALSE(blocked);
  EXPECT_EQ(blocked.error().code, ErrorCode::kUpstreamFailed);
  EXPECT_EQ(blocked.error().message, "telegram refused: Forbidden: bot was blocked by the user");

  Post("/_control/fail", {{"method", "sendMessage"}, {"error_code", 429}, {"retry_after", 3}});
  auto limited = SendAndWait(Outgoing({Plain("hi")}, "1001"));
  ASSERT_FALSE(limited);
  EXPECT_EQ(limited.error().code, ErrorCode::kUpstreamRateLimited);

  // A MarkdownV2 text Telegram cannot parse goes again once, as plain text.
  Post("/_control/fail", {{"method", "sendMessage"},
                          {"error_code", 400},
                          {"description", "Bad Request: can't parse entities: bad"}});
  auto fallback = SendAndWait(Outgoing({Plain("**x**")}, "1001"));
  ASSERT_TRUE(fallback) << fallback.error().message;
  auto sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].at("text"), Json("**x**"));
  EXPECT_TRUE(sent[0].at("parse_mode").is_null());
  ExpectNoToken();
}

TEST_F(TelegramAdapterTest, PhotoBytesAreDownloadedIntoTheImage) {
  Post("/_control/files", {{"file_id", "photo-1"}, {"content_base64", "iVBORw0KGgo="}});
  MakeAdapter();
  adapter_->Start();
  ASSERT_TRUE(Connected());
  Post("/_control/updates",
       {{"update", Parse(R"({"message":{"message_id":3,"from":{"id":1001,"first_name":"T"},)"
                         R"("chat":{"id":1001,"type":"private"},"caption":"see",)"
                         R"("photo":[{"file_id":"photo-1","file_unique_id":"u","width":1,)"
                         R"("height":1}]}})")}});
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  const ReceivedMessage m = host_.Read([&] { return host_.messages[0]; });
  ASSERT_EQ(m.chain.size(), 3u);
  EXPECT_EQ(m.chain[2].type, ElementType::kImage);
  EXPECT_EQ(m.chain[2].base64, "data:image/jpeg;base64,iVBORw0KGgo=");
  EXPECT_EQ(m.chain[2].url.find(token_), std::string::npos);
}

TEST_F(TelegramAdapterTest, MalformedUpdateIsSkippedAndConfirmed) {
  MakeAdapter();
  adapter_->Start();
  ASSERT_TRUE(Connected());
  Post("/_control/updates",
       {{"update", Parse(R"({"message":{"message_id":"x","chat":{"id":1,"type":"private"}}})")}});
  ASSERT_TRUE(host_.WaitFor([&] {
    for (const auto& l : host_.logs) {
      if (l.find("skipped malformed update") != std::string::npos) return true;
    }
    return false;
  }));
  Post("/_control/message", {{"text", "fine"}});
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  EXPECT_TRUE(Eventually([&] { return Stats().at("pending").as_int64() == 0; }));
}

TEST_F(TelegramAdapterTest, WebhookModeChecksTheSecret) {
  MakeAdapter("webhook", "https://127.0.0.1:9/bots/bot-1");
  adapter_->Start();
  ASSERT_TRUE(Connected());
  ASSERT_TRUE(Eventually([&] { return Stats().at("webhook").is_object(); }));
  const std::string secret(Stats().at("webhook").at("secret_token").as_string());
  EXPECT_EQ(secret.size(), 32u);
  EXPECT_EQ(Calls("getupdates"), 0);

  auto call = [&](const std::string& secret_header, const std::string& body) {
    WebhookCall c;
    c.method = "POST";
    c.headers.emplace_back("x-telegram-bot-api-secret-token", secret_header);
    c.body = body;
    std::promise<WebhookAnswer> p;
    adapter_->HandleWebhook(std::move(c), [&p](WebhookAnswer a) { p.set_value(std::move(a)); });
    return p.get_future().get();
  };
  const std::string update =
      R"({"update_id":9,"message":{"message_id":4,"from":{"id":8,"first_name":"W"},)"
      R"("chat":{"id":8,"type":"private"},"text":"via webhook"}})";
  EXPECT_EQ(call("wrong", update).status, 401);
  EXPECT_EQ(call("", "not json").status, 401);
  EXPECT_EQ(call(secret, "not json").status, 400);
  EXPECT_EQ(call(secret, R"({"update_id":10,"poll":{}})").status, 200);
  EXPECT_EQ(call(secret, update).status, 200);
  EXPECT_EQ(call(secret, update).status, 200);  // a redelivery
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.messages.empty(); }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(host_.Read([&] { return host_.messages.size(); }), 1u);
  EXPECT_EQ(host_.Read([&] { return host_.messages[0].chain[1].text; }), "via webhook");
  ASSERT_TRUE(StopAdapter());
  EXPECT_EQ(Calls("deletewebhook"), 0);
}

TEST_F(TelegramAdapterTest, WebhookModeNeedsHttps) {
  MakeAdapter("webhook", "");
  adapter_->Start();
  ASSERT_TRUE(host_.WaitFor([&] { return !host_.troubles.empty(); }));
  EXPECT_NE(host_.Read([&] { return host_.troubles[0]; }).find("https"), std::string::npos);
  EXPECT_EQ(Calls("setwebhook"), 0);
}

}  // namespace
}  // namespace sb::platforms::telegram
