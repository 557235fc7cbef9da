// The shared platform crypto (platforms/common): WXBizMsgCrypt for WeCom and WeChat, Lark's
// Encrypt Key, QQ's Ed25519. Known answers come from the platforms' own samples and docs, named at
// each test; the rest are round trips and hostile inputs that must come back as error values.
#include <gtest/gtest.h>

#include <string>

#include "platforms/common/ed25519.hpp"
#include "platforms/common/lark_crypto.hpp"
#include "platforms/common/signatures.hpp"
#include "platforms/common/wechat_crypto.hpp"
#include "support/wechat_samples.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::common {
namespace {

using util::ErrorCode;

using namespace samples;  // NOLINT(google-build-using-namespace): test constants

std::string Key() { return WeChatAesKey(kWeComAesKey).value(); }

// Encrypts `plain` (already laid out and padded by the test) as the sender would.
std::string RawEncrypt(const std::string& key, const std::string& plain) {
  std::string cipher;
  EXPECT_TRUE(util::Aes256CbcEncrypt(key, key.substr(0, 16), plain, cipher));
  return Base64Encode(cipher);
}

TEST(WeChatCrypto, OfficialWeComSampleSignatures) {
  EXPECT_EQ(WeChatSignature(kWeComToken, "1476416373", "47744683", kWeComEchoStr),
            "012bc692d0a58dd4b10f8dfe5c4ac00ae211ebeb");
  EXPECT_EQ(WeChatSignature(kWeComToken, "1476422779", "1597212914", kWeComPostEncrypt),
            "0c3914025cb4b4d68103f6bfc8db550f79dcf48e");
  EXPECT_TRUE(WeChatVerifySignature(kWeComToken, "1476422779", "1597212914", kWeComPostEncrypt,
                                    "0C3914025CB4B4D68103F6BFC8DB550F79DCF48E"));
}

TEST(WeChatCrypto, OfficialWeComSampleDecrypts) {
  EXPECT_EQ(WeChatDecrypt(Key(), kWeComEchoStr, kWeComCorpId).value(), "1288432023552776189");
  EXPECT_EQ(WeChatDecrypt(Key(), kWeComPostEncrypt, kWeComCorpId).value(), kWeComPostPlain);
}

TEST(WeChatCrypto, OfficialOfficialAccountSampleEncrypts) {
  // Tencent's WeChat Official Account Java sample (WXBizMsgCryptTest): fixed random prefix.
  const std::string key = WeChatAesKey("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG").value();
  const std::string message =
      "\xe6\x88\x91\xe6\x98\xaf\xe4\xb8\xad\xe6\x96\x87"
      "abcd123";
  const std::string encrypted =
      WeChatEncrypt(key, message, "wxb11529c136998cb6", "aaaabbbbccccdddd").value();
  EXPECT_EQ(encrypted,
            "jn1L23DB+6ELqJ+6bruv21Y6MD7KeIfP82D6gU39rmkgczbWwt5+3bnyg5K55bgVtVzd832WzZGMhkP72vVOfg"
            "==");
  EXPECT_EQ(WeChatDecrypt(key, encrypted, "wxb11529c136998cb6").value(), message);
}

TEST(WeChatCrypto, PlainSignatureIsSortedSha1) {
  // Computed independently: python3 hashlib.sha1("".join(sorted([...]))).
  EXPECT_EQ(WeChatPlainSignature("token", "1409659813", "1372623149"),
            util::Sha1Hex("13726231491409659813token"));
  const std::string sig = WeChatPlainSignature("token", "1409659813", "1372623149");
  EXPECT_TRUE(WeChatVerifyPlainSignature("token", "1409659813", "1372623149", sig));
  EXPECT_EQ(WeChatVerifyPlainSignature("token", "1409659814", "1372623149", sig).error().code,
            ErrorCode::kUnauthenticated);
  EXPECT_EQ(
      WeChatVerifyPlainSignature("", "1", "2", WeChatPlainSignature("", "1", "2")).error().code,
      ErrorCode::kUnauthenticated);
}

TEST(WeChatCrypto, WrongSignaturesAreUnauthenticated) {
  for (const char* bad : {"", "0c3914025cb4b4d68103f6bfc8db550f79dcf48f", "0c39",
                          "0c3914025cb4b4d68103f6bfc8db550f79dcf48e0"}) {
    EXPECT_EQ(WeChatVerifySignature(kWeComToken, "1476422779", "1597212914", kWeComPostEncrypt, bad)
                  .error()
                  .code,
              ErrorCode::kUnauthenticated)
        << bad;
  }
  EXPECT_FALSE(WeChatVerifySignature(kWeComToken, "1476422780", "1597212914", kWeComPostEncrypt,
                                     "0c3914025cb4b4d68103f6bfc8db550f79dcf48e"));
}

TEST(WeChatCrypto, RoundTripsIncludingEmptyMessageAndReceiveId) {
  for (const std::string& msg : {std::string(), std::string("x"), std::string(100, 'y')}) {
    for (const std::string& id : {std::string(), std::string(kWeComCorpId)}) {
      auto enc = WeChatEncrypt(Key(), msg, id, "0123456789abcdef");
      ASSERT_TRUE(enc);
      EXPECT_EQ(WeChatDecrypt(Key(), *enc, id).value(), msg);
    }
  }
}

TEST(WeChatCrypto, BadKeysAreInvalidArgument) {
  EXPECT_EQ(WeChatAesKey("").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(WeChatAesKey("6qkdMrq68nTKduznJYO1A37W2oEgpkMUvkttRToqhU").error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(WeChatAesKey("6qkdMrq68nTKduznJYO1A37W2oEgpkMUvkttRToqhU!").error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(WeChatDecrypt("short", kWeComEchoStr, kWeComCorpId).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(WeChatEncrypt("short", "m", "id", "0123456789abcdef").error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(WeChatEncrypt(Key(), "m", "id", "short").error().code, ErrorCode::kInvalidArgument);
}

TEST(WeChatCrypto, WrongReceiveIdIsUnauthenticated) {
  auto r = WeChatDecrypt(Key(), kWeComPostEncrypt, "ww0000000000000000");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated);
  EXPECT_EQ(WeChatDecrypt(Key(), kWeComPostEncrypt, "").error().code, ErrorCode::kUnauthenticated);
}

TEST(WeChatCrypto, HostileCiphertextsAreErrorsNotCrashes) {
  const std::string key = Key();
  // Empty, not base64, not whole blocks, truncated by one block.
  for (const std::string& bad :
       {std::string(), std::string("!!!!"), std::string("AAAA"), Base64Encode(std::string(15, 'a')),
        std::string(kWeComPostEncrypt).substr(0, 20)}) {
    auto r = WeChatDecrypt(key, bad, kWeComCorpId);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  std::string raw;
  ASSERT_TRUE(util::Base64Decode(kWeComPostEncrypt, raw));
  auto truncated = WeChatDecrypt(key, Base64Encode(raw.substr(0, raw.size() - 32)), kWeComCorpId);
  ASSERT_FALSE(truncated);  // the padding is now whatever the cut left
  EXPECT_EQ(truncated.error().code, ErrorCode::kInvalidArgument);

  const std::string random16 = "0123456789abcdef";
  const auto with_length = [&](std::uint32_t n, const std::string& tail) {
    std::string plain = random16;
    for (int shift = 24; shift >= 0; shift -= 8) plain.push_back(static_cast<char>(n >> shift));
    plain += tail;
    return plain;
  };
  const auto padded = [](std::string plain) {
    const std::size_t pad = 32 - plain.size() % 32;
    plain.append(pad, static_cast<char>(pad));
    return plain;
  };
  // A declared length far beyond the buffer, and one just past it.
  for (std::uint32_t n : {0xffffffffu, 0x7fffffffu, 13u}) {
    auto r = WeChatDecrypt(key, RawEncrypt(key, padded(with_length(n, "hello world!"))), "");
    ASSERT_FALSE(r) << n;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << n;
    EXPECT_NE(r.error().message.find("length"), std::string::npos);
  }
  // Shorter than the 20-byte header once unpadded.
  EXPECT_EQ(WeChatDecrypt(key, RawEncrypt(key, padded(random16)), "").error().code,
            ErrorCode::kInvalidArgument);
  // Bad padding: zero, over 32, and inconsistent pad bytes.
  std::string plain = with_length(3, "abc") + std::string(9, '\0');  // 32 bytes, last byte 0
  EXPECT_EQ(WeChatDecrypt(key, RawEncrypt(key, plain), "").error().code,
            ErrorCode::kInvalidArgument);
  plain.back() = 33;
  EXPECT_EQ(WeChatDecrypt(key, RawEncrypt(key, plain), "").error().code,
            ErrorCode::kInvalidArgument);
  plain = with_length(3, "abc") + std::string(8, '\x07') + "\x09";
  EXPECT_NE(WeChatDecrypt(key, RawEncrypt(key, plain), "").error().message.find("padding"),
            std::string::npos);
  // A well-formed padding that is a whole 32-byte block of 32s decodes.
  plain = with_length(3, "abc") + std::string(9, '\x09');
  EXPECT_EQ(WeChatDecrypt(key, RawEncrypt(key, plain), "").value(), "abc");
}

// open.feishu.cn "接收事件" (encrypt-key-encryption-configuration-case): key "test key".
TEST(LarkCrypto, OfficialDecryptExample) {
  EXPECT_EQ(LarkDecrypt("test key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=").value(),
            "hello world");
}

TEST(LarkCrypto, RoundTripAndWrongKey) {
  const std::string event = R"({"challenge":"ajls384kdjx98XX","type":"url_verification"})";
  const std::string enc = LarkEncrypt("ek", event, "fedcba9876543210").value();
  EXPECT_EQ(LarkDecrypt("ek", enc).value(), event);
  EXPECT_EQ(LarkDecrypt("ek", LarkEncrypt("ek", "", "fedcba9876543210").value()).value(), "");
  auto wrong = LarkDecrypt("other key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(LarkEncrypt("", "x", "fedcba9876543210").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(LarkEncrypt("ek", "x", "short").error().code, ErrorCode::kInvalidArgument);
}

TEST(LarkCrypto, HostileCiphertextsAreInvalidArgument) {
  std::string raw;
  ASSERT_TRUE(util::Base64Decode("P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=", raw));
  for (const std::string& bad :
       {std::string(), std::string("not base64!"), Base64Encode(raw.substr(0, 16)),
        Base64Encode(raw.substr(0, 31)), Base64Encode(raw + "x")}) {
    auto r = LarkDecrypt("test key", bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(LarkDecrypt("", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=").error().code,
            ErrorCode::kInvalidArgument);
  // Bad padding: a last block that decrypts to a zero pad byte.
  std::string zero_pad;
  ASSERT_TRUE(util::Aes256CbcEncrypt(util::Sha256("k"), "0123456789abcdef", std::string(16, '\0'),
                                     zero_pad));
  EXPECT_NE(
      LarkDecrypt("k", Base64Encode("0123456789abcdef" + zero_pad)).error().message.find("padding"),
      std::string::npos);
}

TEST(LarkCrypto, SignatureIsPlainSha256OfTheConcatenation) {
  // No worked example in Lark's docs; computed independently with python3 hashlib:
  // sha256(b"1700000000" b"nonce-1" b"test key" b'{"encrypt":"P37w...ghk="}').hexdigest()
  const std::string body = R"({"encrypt":"P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="})";
  const std::string expected = "002a272a435d056759149cce18e88064ff320d38d91a09432445c344c4296949";
  EXPECT_EQ(LarkSignature("1700000000", "nonce-1", "test key", body), expected);
  EXPECT_TRUE(LarkVerifySignature("1700000000", "nonce-1", "test key", body, expected));
  EXPECT_TRUE(
      LarkVerifySignature("1700000000", "nonce-1", "test key", body,
                          "002A272A435D056759149CCE18E88064FF320D38D91A09432445C344C4296949"));
  for (const std::string& bad : {std::string(), expected.substr(1), expected + "0",
                                 LarkSignature("1700000001", "nonce-1", "test key", body)}) {
    EXPECT_EQ(LarkVerifySignature("1700000000", "nonce-1", "test key", body, bad).error().code,
              ErrorCode::kUnauthenticated);
  }
  EXPECT_FALSE(LarkVerifySignature("1700000000", "nonce-1", "test key", body + " ", expected));
  EXPECT_EQ(LarkVerifySignature("1", "n", "", "b", LarkSignature("1", "n", "", "b")).error().code,
            ErrorCode::kUnauthenticated);
}

// tencent-connect/bot-docs interface-framework/sign.md and event-emit.md (bot.q.qq.com).
TEST(QqBotEd25519, SeedRepeatsTheSecret) {
  EXPECT_EQ(QqBotSeed("naOC0ocQE3shWLAfffVLB1rhYPG7").value(), "naOC0ocQE3shWLAfffVLB1rhYPG7naOC");
  EXPECT_EQ(QqBotSeed("abc").value(), "abcabcabcabcabcabcabcabcabcabcab");
  EXPECT_EQ(QqBotSeed(std::string(40, 'z')).value(), std::string(32, 'z'));
  EXPECT_EQ(QqBotSeed("").error().code, ErrorCode::kInvalidArgument);
}

TEST(QqBotEd25519, OfficialPublicKeyAndSignatureDemos) {
  const std::string seed = QqBotSeed("naOC0ocQE3shWLAfffVLB1rhYPG7").value();
  EXPECT_EQ(util::HexEncode(util::Ed25519PublicKey(seed)),
            "d7c362fe78aef81ff23287b493628b5db02a3c4fe30b215e4d19609b5d76673a");
  // The doc prints the body on one line, but its signature is over the pretty-printed form
  // (two-space indent, newline-separated); the one-line form does not verify.
  const std::string message =
      "1725442341{\n  \"op\": 0,\n  \"d\": {},\n  \"t\": \"GATEWAY_EVENT_NAME\"\n}";
  const std::string sig =
      "865ad13a61752ca65e26bde6676459cd36cf1be609375b37bd62af366e1dc25a8dc789ba7f14e017ada3d554c6"
      "71a911bfdf075ba54835b23391d509579ed002";
  EXPECT_EQ(QqBotSign("naOC0ocQE3shWLAfffVLB1rhYPG7", message).value(), sig);
  EXPECT_TRUE(QqBotVerify("naOC0ocQE3shWLAfffVLB1rhYPG7", message, sig));
  EXPECT_TRUE(Ed25519VerifyHex("d7c362fe78aef81ff23287b493628b5db02a3c4fe30b215e4d19609b5d76673a",
                               message, sig));
  EXPECT_FALSE(QqBotVerify("naOC0ocQE3shWLAfffVLB1rhYPG7",
                           R"(1725442341{ "op": 0,"d": {}, "t": "GATEWAY_EVENT_NAME"})", sig));
}

TEST(QqBotEd25519, OfficialOp13ValidationAnswer) {
  EXPECT_EQ(
      QqBotSign("DG5g3B4j9X2KOErG", std::string("1725442341") + "Arq0D5A61EgUu4OxUvOp").value(),
      "87befc99c42c651b3aac0278e71ada338433ae26fcb24307bdc5ad38c1adc2d01bcfcadc0842edac85e852"
      "05028a1132afe09280305f13aa6909ffc2d652c706");
}

TEST(QqBotEd25519, Rfc8032TestVector1) {
  EXPECT_TRUE(Ed25519VerifyHex(
      "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9"
      "b46bd25bf5f0595bbe24655141438e7a100b"));
}

TEST(QqBotEd25519, ForgedOrMalformedSignaturesAreUnauthenticated) {
  const std::string secret = "naOC0ocQE3shWLAfffVLB1rhYPG7";
  const std::string message = R"(1725442341{ "op": 0,"d": {}, "t": "GATEWAY_EVENT_NAME"})";
  const std::string sig = QqBotSign(secret, message).value();
  std::string flipped = sig;
  flipped[10] = flipped[10] == '0' ? '1' : '0';
  std::string high_s = sig;  // S with its top bits set is never canonical
  high_s[126] = 'f';
  high_s[127] = 'f';
  for (const std::string& bad : {std::string(), sig.substr(2), sig + "00", flipped, high_s,
                                 std::string(128, 'g'), std::string(128, '0')}) {
    auto r = QqBotVerify(secret, message, bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated) << bad;
  }
  EXPECT_EQ(QqBotVerify(secret, message + " ", sig).error().code, ErrorCode::kUnauthenticated);
  EXPECT_EQ(QqBotVerify("another secret", message, sig).error().code, ErrorCode::kUnauthenticated);
  EXPECT_EQ(QqBotVerify("", message, sig).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(QqBotSign("", message).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Ed25519VerifyHex("abcd", message, sig).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Ed25519VerifyHex(std::string(64, 'x'), message, sig).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(UtilCrypto, HexDecodeAndRawAes) {
  std::string out;
  ASSERT_TRUE(util::HexDecode("00ffAb", out));
  EXPECT_EQ(out, std::string("\x00\xff\xab", 3));
  EXPECT_FALSE(util::HexDecode("abc", out));
  EXPECT_FALSE(util::HexDecode("zz", out));
  EXPECT_TRUE(out.empty());
  // FIPS-197 / NIST SP 800-38A F.2.5 CBC-AES256.Encrypt, first block.
  std::string key, iv, block;
  ASSERT_TRUE(
      util::HexDecode("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4", key));
  ASSERT_TRUE(util::HexDecode("000102030405060708090a0b0c0d0e0f", iv));
  ASSERT_TRUE(util::HexDecode("6bc1bee22e409f96e93d7e117393172a", block));
  ASSERT_TRUE(util::Aes256CbcEncrypt(key, iv, block, out));
  EXPECT_EQ(util::HexEncode(out), "f58c4c04d6e5f1ba779eabfb5f7bfbd6");
  std::string back;
  ASSERT_TRUE(util::Aes256CbcDecrypt(key, iv, out, back));
  EXPECT_EQ(back, block);
  EXPECT_FALSE(util::Aes256CbcDecrypt(key, iv, "fifteen bytes!!", back));
  EXPECT_FALSE(util::Aes256CbcDecrypt(key.substr(1), iv, out, back));
  EXPECT_FALSE(util::Aes256CbcDecrypt(key, iv.substr(1), out, back));
  EXPECT_EQ(util::Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
}

}  // namespace
}  // namespace sb::platforms::common
