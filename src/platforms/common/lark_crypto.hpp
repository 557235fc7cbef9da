// Lark / Feishu event security with an Encrypt Key: bodies `{"encrypt": base64(iv | AES-256-CBC)}`
// under key SHA-256(encrypt_key), and `X-Lark-Signature` = hex SHA-256(timestamp + nonce +
// encrypt_key + raw body). Pure and I/O-free; every malformed input is an error value.
//   if (!common::LarkVerifySignature(ts, nonce, encrypt_key, raw_body, sig_header)) return 401;
//   auto json = common::LarkDecrypt(encrypt_key, body_json["encrypt"]);
#pragma once

#include <string>
#include <string_view>

#include "util/error.hpp"

namespace sb::platforms::common {

// The event JSON inside an `encrypt` value. kInvalidArgument for an empty key, text that is not
// base64, fewer than 16 IV bytes plus one block, a ciphertext that is not whole AES blocks, or
// bad PKCS#7 padding (a wrong key almost always shows as that).
util::Result<std::string> LarkDecrypt(std::string_view encrypt_key,
                                      std::string_view base64_encrypt);

// The inverse with a given 16-byte IV (Lark draws it at random), for test fakes.
// kInvalidArgument for an empty key or an IV that is not 16 bytes.
util::Result<std::string> LarkEncrypt(std::string_view encrypt_key, std::string_view plaintext,
                                      std::string_view iv16);

// Lowercase hex SHA-256 of the four byte strings concatenated (plain SHA-256, not an HMAC).
std::string LarkSignature(std::string_view timestamp, std::string_view nonce,
                          std::string_view encrypt_key, std::string_view raw_body);

// Constant-time check of `X-Lark-Signature` (case-insensitive hex); kUnauthenticated on a
// mismatch, an empty header or an empty key.
util::Result<void> LarkVerifySignature(std::string_view timestamp, std::string_view nonce,
                                       std::string_view encrypt_key, std::string_view raw_body,
                                       std::string_view received_signature);

}  // namespace sb::platforms::common
