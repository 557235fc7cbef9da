// Tencent's "WXBizMsgCrypt" callback format, shared by WeCom (app, customer service, AI bot) and
// WeChat Official Accounts in safe mode: SHA-1 signatures over sorted fields and AES-256-CBC with
// a 32-byte PKCS#7 block. Pure and I/O-free; every malformed input is an error value.
//   auto key = common::WeChatAesKey(config.encoding_aes_key);            // once, at start
//   if (!common::WeChatVerifySignature(token, ts, nonce, encrypt, msg_signature)) return 401;
//   auto xml = common::WeChatDecrypt(*key, encrypt, corp_id);
#pragma once

#include <string>
#include <string_view>

#include "util/error.hpp"

namespace sb::platforms::common {

// The 32-byte AES key: base64 of EncodingAESKey + "=". kInvalidArgument unless the text is 43
// base64 characters that decode to 32 bytes.
util::Result<std::string> WeChatAesKey(std::string_view encoding_aes_key);

// `msg_signature`: lowercase hex SHA-1 of token, timestamp, nonce and encrypt sorted bytewise and
// concatenated without separators. Query values must already be URL-decoded.
std::string WeChatSignature(std::string_view token, std::string_view timestamp,
                            std::string_view nonce, std::string_view encrypt);
// The plain-mode `signature` of Official Accounts (GET verification and plaintext POSTs): the
// same over token, timestamp and nonce only.
std::string WeChatPlainSignature(std::string_view token, std::string_view timestamp,
                                 std::string_view nonce);

// Constant-time checks of a received signature (case-insensitive hex); kUnauthenticated on a
// mismatch, including an empty token or signature.
util::Result<void> WeChatVerifySignature(std::string_view token, std::string_view timestamp,
                                         std::string_view nonce, std::string_view encrypt,
                                         std::string_view received_signature);
util::Result<void> WeChatVerifyPlainSignature(std::string_view token, std::string_view timestamp,
                                              std::string_view nonce,
                                              std::string_view received_signature);

// Decrypts the base64 `<Encrypt>` / `"encrypt"` / echostr value with the key from WeChatAesKey and
// returns the message. The plaintext must be random(16) | uint32 big-endian length | message |
// receive id, padded PKCS#7 to 32 bytes, and the receive id must equal `expected_receive_id`
// (corp id for WeCom app and customer service, AppID for Official Accounts, "" for the WeCom AI
// bot). kInvalidArgument names what is wrong (key, base64, block size, padding, length); a receive
// id that differs is kUnauthenticated.
util::Result<std::string> WeChatDecrypt(std::string_view aes_key, std::string_view base64_encrypt,
                                        std::string_view expected_receive_id);

// The inverse, for passive replies: base64 of the ciphertext. `random16` is the 16-byte prefix the
// format wants random (the caller draws it with util::RandomBytes; tests fix it).
// kInvalidArgument for a key that is not 32 bytes or a prefix that is not 16.
util::Result<std::string> WeChatEncrypt(std::string_view aes_key, std::string_view message,
                                        std::string_view receive_id, std::string_view random16);

}  // namespace sb::platforms::common
