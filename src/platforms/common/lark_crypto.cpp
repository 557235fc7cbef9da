#include "platforms/common/lark_crypto.hpp"

#include <algorithm>

#include "platforms/common/signatures.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::common {
namespace {

constexpr std::size_t kBlock = 16;

}  // namespace

util::Result<std::string> LarkDecrypt(std::string_view encrypt_key,
                                      std::string_view base64_encrypt) {
  if (encrypt_key.empty()) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the Lark Encrypt Key is empty");
  }
  std::string raw;
  if (base64_encrypt.empty() || !util::Base64Decode(base64_encrypt, raw)) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the Lark ciphertext is not base64");
  }
  if (raw.size() < 2 * kBlock || raw.size() % kBlock != 0) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "the Lark ciphertext is not an IV and whole AES blocks");
  }
  const std::string key = util::Sha256(encrypt_key);
  std::string plain;
  if (!util::Aes256CbcDecrypt(key, std::string_view(raw).substr(0, kBlock),
                              std::string_view(raw).substr(kBlock), plain)) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the Lark ciphertext did not decrypt");
  }
  const std::size_t pad = static_cast<unsigned char>(plain.back());
  if (pad == 0 || pad > kBlock ||
      std::any_of(plain.end() - static_cast<std::ptrdiff_t>(pad), plain.end(),
                  [&](char c) { return static_cast<unsigned char>(c) != pad; })) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "the Lark plaintext has bad padding (wrong Encrypt Key?)");
  }
  plain.resize(plain.size() - pad);
  return plain;
}

util::Result<std::string> LarkEncrypt(std::string_view encrypt_key, std::string_view plaintext,
                                      std::string_view iv16) {
  if (encrypt_key.empty() || iv16.size() != kBlock) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "Lark encryption needs a key and a 16-byte IV");
  }
  std::string padded(plaintext);
  const std::size_t pad = kBlock - padded.size() % kBlock;
  padded.append(pad, static_cast<char>(pad));
  std::string cipher;
  if (!util::Aes256CbcEncrypt(util::Sha256(encrypt_key), iv16, padded, cipher)) {
    return util::Fail(util::ErrorCode::kInternal, "AES encryption failed");
  }
  return Base64Encode(std::string(iv16) + cipher);
}

std::string LarkSignature(std::string_view timestamp, std::string_view nonce,
                          std::string_view encrypt_key, std::string_view raw_body) {
  std::string joined;
  joined.reserve(timestamp.size() + nonce.size() + encrypt_key.size() + raw_body.size());
  joined.append(timestamp).append(nonce).append(encrypt_key).append(raw_body);
  return util::Sha256Hex(joined);
}

util::Result<void> LarkVerifySignature(std::string_view timestamp, std::string_view nonce,
                                       std::string_view encrypt_key, std::string_view raw_body,
                                       std::string_view received_signature) {
  std::string received(received_signature);
  std::transform(received.begin(), received.end(), received.begin(),
                 [](char c) { return (c >= 'A' && c <= 'F') ? static_cast<char>(c + 32) : c; });
  if (encrypt_key.empty() || received.empty() ||
      !util::ConstantTimeEquals(LarkSignature(timestamp, nonce, encrypt_key, raw_body), received)) {
    return util::Fail(util::ErrorCode::kUnauthenticated, "the Lark signature does not match");
  }
  return util::Ok();
}

}  // namespace sb::platforms::common
