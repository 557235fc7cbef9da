#include "platforms/common/wechat_crypto.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "platforms/common/signatures.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::common {
namespace {

constexpr std::size_t kPadBlock = 32;  // WXBizMsgCrypt pads to 32 bytes, not the AES block
constexpr std::size_t kRandomBytes = 16;
constexpr std::size_t kLengthBytes = 4;

std::string SortedSha1(std::array<std::string_view, 4> parts, std::size_t count) {
  std::sort(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(count));
  std::string joined;
  for (std::size_t i = 0; i < count; ++i) joined.append(parts[i]);
  return util::Sha1Hex(joined);
}

std::string Lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

util::Result<void> Matches(std::string_view token, const std::string& expected,
                           std::string_view received) {
  if (token.empty() || received.empty() ||
      !util::ConstantTimeEquals(expected, Lowercase(received))) {
    return util::Fail(util::ErrorCode::kUnauthenticated, "the WeChat signature does not match");
  }
  return util::Ok();
}

util::Result<void> CheckKey(std::string_view aes_key) {
  if (aes_key.size() != 32) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the WeChat AES key is not 32 bytes");
  }
  return util::Ok();
}

}  // namespace

util::Result<std::string> WeChatAesKey(std::string_view encoding_aes_key) {
  std::string key;
  if (encoding_aes_key.size() != 43 ||
      !util::Base64Decode(std::string(encoding_aes_key) + "=", key) || key.size() != 32) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "EncodingAESKey must be 43 base64 characters");
  }
  return key;
}

std::string WeChatSignature(std::string_view token, std::string_view timestamp,
                            std::string_view nonce, std::string_view encrypt) {
  return SortedSha1({token, timestamp, nonce, encrypt}, 4);
}

std::string WeChatPlainSignature(std::string_view token, std::string_view timestamp,
                                 std::string_view nonce) {
  return SortedSha1({token, timestamp, nonce, {}}, 3);
}

util::Result<void> WeChatVerifySignature(std::string_view token, std::string_view timestamp,
                                         std::string_view nonce, std::string_view encrypt,
                                         std::string_view received_signature) {
  return Matches(token, WeChatSignature(token, timestamp, nonce, encrypt), received_signature);
}

util::Result<void> WeChatVerifyPlainSignature(std::string_view token, std::string_view timestamp,
                                              std::string_view nonce,
                                              std::string_view received_signature) {
  return Matches(token, WeChatPlainSignature(token, timestamp, nonce), received_signature);
}

util::Result<std::string> WeChatDecrypt(std::string_view aes_key, std::string_view base64_encrypt,
                                        std::string_view expected_receive_id) {
  if (auto ok = CheckKey(aes_key); !ok) return tl::make_unexpected(ok.error());
  std::string cipher;
  if (base64_encrypt.empty() || !util::Base64Decode(base64_encrypt, cipher)) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the WeChat ciphertext is not base64");
  }
  if (cipher.empty() || cipher.size() % 16 != 0) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "the WeChat ciphertext is not a whole number of AES blocks");
  }
  std::string plain;
  if (!util::Aes256CbcDecrypt(aes_key, aes_key.substr(0, 16), cipher, plain)) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the WeChat ciphertext did not decrypt");
  }
  const std::size_t pad = static_cast<unsigned char>(plain.back());
  if (pad == 0 || pad > kPadBlock || pad > plain.size() ||
      std::any_of(plain.end() - static_cast<std::ptrdiff_t>(pad), plain.end(),
                  [&](char c) { return static_cast<unsigned char>(c) != pad; })) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the WeChat plaintext has bad padding");
  }
  plain.resize(plain.size() - pad);
  if (plain.size() < kRandomBytes + kLengthBytes) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "the WeChat plaintext is shorter than its header");
  }
  std::uint32_t length = 0;
  for (std::size_t i = 0; i < kLengthBytes; ++i) {
    length = (length << 8) | static_cast<unsigned char>(plain[kRandomBytes + i]);
  }
  const std::size_t body = kRandomBytes + kLengthBytes;
  if (length > plain.size() - body) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "the WeChat message length runs past the plaintext");
  }
  std::string_view rest(plain);
  rest.remove_prefix(body);
  if (!util::ConstantTimeEquals(rest.substr(length), expected_receive_id)) {
    return util::Fail(util::ErrorCode::kUnauthenticated,
                      "the WeChat message is for another receive id");
  }
  return std::string(rest.substr(0, length));
}

util::Result<std::string> WeChatEncrypt(std::string_view aes_key, std::string_view message,
                                        std::string_view receive_id, std::string_view random16) {
  if (auto ok = CheckKey(aes_key); !ok) return tl::make_unexpected(ok.error());
  if (random16.size() != kRandomBytes) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the random prefix is not 16 bytes");
  }
  if (message.size() > UINT32_MAX) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the message is too long to encrypt");
  }
  const auto length = static_cast<std::uint32_t>(message.size());
  std::string plain(random16);
  for (int shift = 24; shift >= 0; shift -= 8) {
    plain.push_back(static_cast<char>((length >> shift) & 0xff));
  }
  plain.append(message);
  plain.append(receive_id);
  const std::size_t pad = kPadBlock - plain.size() % kPadBlock;
  plain.append(pad, static_cast<char>(pad));
  std::string cipher;
  if (!util::Aes256CbcEncrypt(aes_key, aes_key.substr(0, 16), plain, cipher)) {
    return util::Fail(util::ErrorCode::kInternal, "AES encryption failed");
  }
  return Base64Encode(cipher);
}

}  // namespace sb::platforms::common
