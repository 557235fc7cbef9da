// Ed25519 webhook signatures: QQ official bots (key pair from the bot secret; op 13 validation
// answer and `X-Signature-Ed25519` over timestamp + body) and Discord interactions (the app's hex
// public key). Pure and I/O-free; libsodium underneath (util/crypto).
//   auto sig = common::QqBotSign(bot_secret, event_ts + plain_token);   // op 13 answer
//   if (!common::QqBotVerify(bot_secret, ts_header + raw_body, sig_header)) return 401;
#pragma once

#include <string>
#include <string_view>

#include "util/error.hpp"

namespace sb::platforms::common {

// QQ's seed: the secret repeated until it has at least 32 bytes, then its first 32.
// kInvalidArgument for an empty secret.
util::Result<std::string> QqBotSeed(std::string_view bot_secret);

// Lowercase hex of the 64-byte signature of `message` with the key pair from the bot secret.
util::Result<std::string> QqBotSign(std::string_view bot_secret, std::string_view message);

// Checks a hex signature (either case) of `message` (timestamp header + raw body) against the
// public key derived from the bot secret. kInvalidArgument for an empty secret; kUnauthenticated
// for a signature that is missing, not 128 hex digits, non-canonical or wrong.
util::Result<void> QqBotVerify(std::string_view bot_secret, std::string_view message,
                               std::string_view hex_signature);

// The same check against a hex public key (Discord's application public key).
// kInvalidArgument unless the key is 64 hex digits; kUnauthenticated as above.
util::Result<void> Ed25519VerifyHex(std::string_view hex_public_key, std::string_view message,
                                    std::string_view hex_signature);

}  // namespace sb::platforms::common
