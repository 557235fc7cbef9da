#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "util/ascii.hpp"
#include "util/call_once.hpp"
#include "util/client_address.hpp"
#include "util/clock.hpp"
#include "util/crypto.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "util/log_text.hpp"
#include "util/markup.hpp"
#include "util/private_files.hpp"
#include "util/secret_box.hpp"
#include "util/simulated_clock.hpp"
#include "util/utf8.hpp"

namespace sb::util {
namespace {

TEST(Uuid, GeneratedIsVersion4AndValid) {
  const std::string id = NewUuid();
  EXPECT_TRUE(IsUuid(id));
  EXPECT_EQ(id[14], '4');
  EXPECT_NE(NewUuid(), id);
}

TEST(Uuid, RejectsMalformed) {
  EXPECT_FALSE(IsUuid(""));
  EXPECT_FALSE(IsUuid("not-a-uuid"));
  EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-42661417400"));    // short
  EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-4266141740000"));  // long
  EXPECT_FALSE(IsUuid("123e4567xe89b-12d3-a456-426614174000"));   // bad dash
  EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-42661417400g"));   // bad hex
  EXPECT_TRUE(IsUuid("123E4567-E89B-12D3-A456-426614174000"));
}

TEST(TypedId, ParseNamesTheField) {
  auto r = BotId::Parse("nope");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("bot uuid"), std::string::npos);
}

TEST(Crypto, Sha256KnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Crypto, HmacSha256KnownVector) {
  // RFC 4231 test case 2.
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Crypto, Base64UrlRoundTrip) {
  for (std::string s : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar",
                                                std::string("\xff\x00\x01", 3)}) {
    std::string back;
    ASSERT_TRUE(Base64UrlDecode(Base64UrlEncode(s), back));
    EXPECT_EQ(back, s);
  }
  EXPECT_EQ(Base64UrlEncode("foobar"), "Zm9vYmFy");
  std::string out;
  EXPECT_FALSE(Base64UrlDecode("ab+c", out));
  // The standard alphabet, with padding, as providers send base64 embeddings.
  ASSERT_TRUE(Base64Decode("+/8=", out));
  EXPECT_EQ(out, std::string("\xfb\xff", 2));
  EXPECT_FALSE(Base64Decode("ab-c", out));
  EXPECT_FALSE(Base64Decode("aGV=sbG8", out));
}

TEST(Crypto, RandomUrlSafeHasLengthAndAlphabet) {
  const auto s = RandomUrlSafe(43);
  ASSERT_EQ(s.size(), 43u);
  for (char c : s) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
}

TEST(Crypto, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
}

TEST(Crypto, PasswordHashVerifies) {
  const auto hash = HashPassword("correct horse");
  ASSERT_FALSE(hash.empty());
  EXPECT_EQ(hash.rfind("$argon2id$", 0), 0u);
  EXPECT_TRUE(VerifyPassword("correct horse", hash));
  EXPECT_FALSE(VerifyPassword("wrong horse", hash));
}

TEST(Json, ParseErrorsAreInvalidArgumentWithOffset) {
  auto r = ParseJson("{\"a\": }");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("offset"), std::string::npos);
  EXPECT_FALSE(ParseJson("{} trailing"));
  EXPECT_FALSE(ParseJson(""));
}

TEST(Json, DeepMergeRecursesIntoObjects) {
  auto base = ParseJson(R"({"a":{"x":1,"y":2},"b":[1],"c":3})")->as_object();
  auto over = ParseJson(R"({"a":{"y":20,"z":30},"b":[2,3]})")->as_object();
  DeepMerge(base, over);
  EXPECT_EQ(SerializeJson(base), R"({"a":{"x":1,"y":20,"z":30},"b":[2,3],"c":3})");
}

TEST(Clock, Rfc3339IsUtcWithMillis) {
  EXPECT_EQ(FormatRfc3339(FromUnixMillis(1795397917120)), "2026-11-23T01:38:37.120Z");
  EXPECT_EQ(FormatRfc3339(FromUnixMillis(0)), "1970-01-01T00:00:00.000Z");
}

}  // namespace
}  // namespace sb::util

namespace sb::util {
namespace {

TEST(Utf8, CutPointNeverSplitsASequence) {
  const std::string text = "ab\xe4\xbd\xa0\xf0\x9f\x98\x80";  // "ab", 你 (3 bytes), 😀 (4)
  EXPECT_EQ(Utf8CutPoint(text, 100), text.size());
  EXPECT_EQ(Utf8CutPoint(text, 2), 2u);
  EXPECT_EQ(Utf8CutPoint(text, 3), 2u);
  EXPECT_EQ(Utf8CutPoint(text, 4), 2u);
  EXPECT_EQ(Utf8CutPoint(text, 5), 5u);
  EXPECT_EQ(Utf8CutPoint(text, 8), 5u);
  EXPECT_EQ(Utf8CutPoint(text, 0), 0u);
}

TEST(Utf8, ToValidUtf8ReplacesEveryIllFormedSequence) {
  EXPECT_EQ(ToValidUtf8("/api/v1/бот/😀"), "/api/v1/бот/😀");
  EXPECT_EQ(ToValidUtf8("a\xff\xfe"
                        "b"),
            "a\uFFFD\uFFFD"
            "b");
  EXPECT_EQ(ToValidUtf8("\xe2\x82"), "\uFFFD");                  // cut short: one replacement
  EXPECT_EQ(ToValidUtf8("\xc0\xaf"), "\uFFFD\uFFFD");            // overlong '/'
  EXPECT_EQ(ToValidUtf8("\xed\xa0\x80"), "\uFFFD\uFFFD\uFFFD");  // a surrogate
  EXPECT_EQ(ToValidUtf8("\xf4\x90\x80\x80"), "\uFFFD\uFFFD\uFFFD\uFFFD");  // past U+10FFFF
  EXPECT_EQ(ToValidUtf8("x\xe2\x82y"), "x\uFFFDy");
  EXPECT_TRUE(IsValidUtf8("/api/v1/бот/😀"));
  for (const char* bad : {"a\xff", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
  }
  // What comes out serializes to JSON that parses back.
  auto json = SerializeJson(Json(ToValidUtf8("no route for /\xff\xc3")));
  ASSERT_TRUE(ParseJson(json)) << json;
}

TEST(Json, SerializeWritesReadableNumbersAndEscapes) {
  auto v =
      ParseJson(R"({"d":1.5,"z":0.0,"i":-3,"big":1e300,"s":"a\"b\\c\n\u0001é","a":[true,null]})");
  ASSERT_TRUE(v);
  EXPECT_EQ(SerializeJson(*v),
            R"({"d":1.5,"z":0.0,"i":-3,"big":1e+300,"s":"a\"b\\c\n\u0001é","a":[true,null]})");
  // What we write reads back as the same value.
  auto back = ParseJson(SerializeJson(*v));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, *v);
}

}  // namespace
}  // namespace sb::util

namespace sb::util {
namespace {

TEST(LogText, ControlCharactersCannotStartALogLine) {
  EXPECT_EQ(EscapeForLog("/zz\n127.0.0.1 GET /forged 200"), "/zz\\x0a127.0.0.1 GET /forged 200");
  EXPECT_EQ(EscapeForLog("a\\b\x7f"), "a\\x5cb\\x7f");
  EXPECT_EQ(EscapeForLog("/api/v1/бот"), "/api/v1/бот");
}

}  // namespace
}  // namespace sb::util

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace sb::util {
namespace {

namespace fs = std::filesystem;

unsigned ModeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

TEST(PrivateFiles, NewFoldersAndFilesAreTheOwnersOnlyWhateverTheUmask) {
  std::random_device rd;
  const fs::path root = fs::temp_directory_path() / ("sb-private-" + std::to_string(rd()));
  fs::create_directories(root);
  fs::permissions(root, fs::perms(0755));
  const mode_t old_umask = ::umask(022);
  ASSERT_TRUE(CreatePrivateDirectories(root / "a" / "b" / "c"));
  EXPECT_EQ(ModeOf(root), 0755u) << "an existing folder is left alone";
  EXPECT_EQ(ModeOf(root / "a"), 0700u);
  EXPECT_EQ(ModeOf(root / "a" / "b" / "c"), 0700u);
  ASSERT_TRUE(CreatePrivateDirectories(root / "a" / "b" / "c"));  // exists: fine

  ASSERT_TRUE(CreatePrivateFile(root / "new.db"));
  EXPECT_EQ(ModeOf(root / "new.db"), 0600u);
  {
    std::ofstream old(root / "old.db");
    old << "keep";
  }
  fs::permissions(root / "old.db", fs::perms(0644));
  ASSERT_TRUE(CreatePrivateFile(root / "old.db"));
  EXPECT_EQ(ModeOf(root / "old.db"), 0600u);
  EXPECT_EQ(fs::file_size(root / "old.db"), 4u) << "an existing file keeps its content";

  // Not through a link, and not a folder where a file stands.
  fs::create_symlink(root / "elsewhere", root / "link.db");
  EXPECT_FALSE(CreatePrivateFile(root / "link.db"));
  EXPECT_FALSE(fs::exists(root / "elsewhere"));
  auto blocked = CreatePrivateDirectories(root / "old.db" / "x");
  ASSERT_FALSE(blocked);
  EXPECT_EQ(blocked.error().code, ErrorCode::kInternal);
  ::umask(old_umask);
  fs::remove_all(root);
}

}  // namespace
}  // namespace sb::util

namespace sb::util {
namespace {

TEST(SecretBox, SealsUnderKeyAndContextAndPassesOldPlaintextThrough) {
  const auto box = SecretBox::FromKeyMaterial("key-material-of-the-data-directory-0123456789");
  const std::string sealed = box.Seal("sk-live-secret", "providers.api_keys:p1");
  EXPECT_TRUE(SecretBox::IsSealed(sealed));
  EXPECT_EQ(sealed.find("sk-live-secret"), std::string::npos);
  EXPECT_NE(box.Seal("sk-live-secret", "providers.api_keys:p1"), sealed) << "fresh nonce";
  auto opened = box.Open(sealed, "providers.api_keys:p1");
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(*opened, "sk-live-secret");
  EXPECT_EQ(*box.Open(box.Seal("", "c"), "c"), "");

  // Another row, another key, or an altered value: refused.
  EXPECT_EQ(box.Open(sealed, "providers.api_keys:p2").error().code, ErrorCode::kInternal);
  const auto other = SecretBox::FromKeyMaterial("some-other-data-directory-key-material");
  EXPECT_EQ(other.Open(sealed, "providers.api_keys:p1").error().code, ErrorCode::kInternal);
  std::string altered = sealed;
  altered[altered.size() - 3] = altered[altered.size() - 3] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(box.Open(altered, "providers.api_keys:p1"));
  EXPECT_FALSE(box.Open("sbenc1:***", "providers.api_keys:p1"));

  // A row written before sealing existed reads as it is.
  EXPECT_EQ(*box.Open("[\"sk-plain\"]", "providers.api_keys:p1"), "[\"sk-plain\"]");
}

}  // namespace
}  // namespace sb::util

namespace sb::util {
namespace {

TEST(ClientAddress, AnIpv6ClientCountsByItsSlash64AndAMappedOneAsIpv4) {
  EXPECT_EQ(ClientAddressKey("2001:db8:1:2:aa::1"), "2001:0db8:0001:0002::/64");
  EXPECT_EQ(ClientAddressKey("2001:db8:1:2:ffff::9"), ClientAddressKey("2001:db8:1:2::1"));
  EXPECT_NE(ClientAddressKey("2001:db8:1:3::1"), ClientAddressKey("2001:db8:1:2::1"));
  EXPECT_EQ(ClientAddressKey("::ffff:10.0.0.7"), "10.0.0.7");
  EXPECT_EQ(ClientAddressKey("10.0.0.7"), "10.0.0.7");
  EXPECT_EQ(ClientAddressKey("not an address"), "not an address");
}

}  // namespace
}  // namespace sb::util

namespace sb::util {
namespace {

TEST(SimulatedClock, RunsTimersInTimeOrderAsTimeAdvances) {
  SimulatedClock clock(FromUnixMillis(0));
  std::vector<int> fired;
  clock.After(std::chrono::milliseconds(300), [&] { fired.push_back(3); });
  clock.After(std::chrono::milliseconds(100), [&] {
    fired.push_back(1);
    // Scheduled by a timer, due within the same Advance: runs in it.
    clock.After(std::chrono::milliseconds(50), [&] { fired.push_back(2); });
  });
  auto cancelled = clock.After(std::chrono::milliseconds(200), [&] { fired.push_back(99); });
  cancelled.Cancel();
  EXPECT_EQ(clock.pending(), 2u);
  clock.Advance(std::chrono::milliseconds(299));
  EXPECT_EQ(fired, (std::vector<int>{1, 2}));
  EXPECT_EQ(ToUnixMillis(clock.Now()), 299);
  clock.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(fired, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(clock.pending(), 0u);
}

TEST(SystemClock, AfterRunsOnItsOwnThreadAndCancelStopsACall) {
  SystemClock clock;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> fired;
  const auto caller = std::this_thread::get_id();
  std::thread::id ran_on;
  auto cancelled = clock.After(std::chrono::milliseconds(20), [&] {
    std::lock_guard lock(mu);
    fired.push_back(2);
  });
  clock.After(std::chrono::milliseconds(1), [&] {
    std::lock_guard lock(mu);
    fired.push_back(1);
    ran_on = std::this_thread::get_id();
  });
  cancelled.Cancel();
  clock.After(std::chrono::milliseconds(40), [&] {
    std::lock_guard lock(mu);
    fired.push_back(3);
    cv.notify_all();
  });
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return fired.size() >= 2; }));
  EXPECT_EQ(fired, (std::vector<int>{1, 3}));
  EXPECT_NE(ran_on, caller);
}

TEST(SystemClock, PendingCallsDieWithTheClock) {
  std::atomic<bool> ran{false};
  {
    SystemClock clock;
    clock.After(std::chrono::hours(1), [&] { ran = true; });
  }
  EXPECT_FALSE(ran.load());
}

TEST(CallOnce, CallsOnceAndFallsBackWhenDroppedUnanswered) {
  std::vector<int> got;
  {
    CallOnce<int> once([&](int v) { got.push_back(v); }, [] { return -1; });
    once(7);
    once(8);
  }
  {
    CallOnce<int> dropped([&](int v) { got.push_back(v); }, [] { return -1; });
  }
  EXPECT_EQ(got, (std::vector<int>{7, -1}));
}

TEST(Ascii, EqualsIgnoreCaseFoldsAsciiOnly) {
  EXPECT_TRUE(EqualsIgnoreCase("Universal", "uNIVERSAL"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("API", "APIs"));
  EXPECT_FALSE(EqualsIgnoreCase("Event", "Evenu"));
  EXPECT_FALSE(EqualsIgnoreCase("\xc3\x84", "\xc3\xa4"));  // Ä and ä: UTF-8 is not folded
}

}  // namespace
}  // namespace sb::util

namespace sb::util {
namespace {

TEST(Markup, EscapesTheFiveMeaningfulCharacters) {
  EXPECT_EQ(EscapeMarkup("<a href=\"x\">Tom & Jerry's</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
  EXPECT_EQ(EscapeMarkup("plain 文字"), "plain 文字");
  EXPECT_EQ(EscapeMarkup(""), "");
}

}  // namespace
}  // namespace sb::util
