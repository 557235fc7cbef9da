// Cryptographic primitives used by auth and platform signatures: random bytes, SHA-1/SHA-256,
// HMAC-SHA256, raw AES-256-CBC blocks, Ed25519, base64url, argon2id password hashing and
// constant-time comparison. Padding and wire layouts live with their callers.
//   std::string key = RandomUrlSafe(43);
//   std::string digest_hex = Sha256Hex(key);
//   bool same = ConstantTimeEquals(a, b);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sb::util {

// Fills `out` from the operating system's CSPRNG. Aborts if none is available.
void RandomBytes(unsigned char* out, std::size_t n);

// `n` characters from the URL-safe base64 alphabet, uniformly random.
std::string RandomUrlSafe(std::size_t n);

std::string Sha256Hex(std::string_view data);
std::string Sha256(std::string_view data);   // raw 32 bytes
std::string Sha1Hex(std::string_view data);  // only for platforms that mandate it (WeChat)
// Raw 32-byte MAC.
std::string HmacSha256(std::string_view key, std::string_view data);
std::string HexEncode(std::string_view bytes);
// Either case; false on an odd length or a character that is not a hex digit.
bool HexDecode(std::string_view hex, std::string& out);

// AES-256-CBC over whole blocks, no padding: the caller pads and unpads. False (and `out` empty)
// unless `key` is 32 bytes, `iv` 16 and `data` a multiple of 16 bytes.
bool Aes256CbcEncrypt(std::string_view key, std::string_view iv, std::string_view data,
                      std::string& out);
bool Aes256CbcDecrypt(std::string_view key, std::string_view iv, std::string_view data,
                      std::string& out);

// Ed25519 (RFC 8032) from a 32-byte seed. Both return an empty string if the seed is not 32 bytes.
std::string Ed25519PublicKey(std::string_view seed);                       // 32 bytes
std::string Ed25519Sign(std::string_view seed, std::string_view message);  // 64 bytes
// False unless `public_key` is 32 bytes, `signature` 64 and the signature is valid and canonical.
bool Ed25519Verify(std::string_view public_key, std::string_view message,
                   std::string_view signature);

std::string Base64UrlEncode(std::string_view bytes);  // no padding
// Return false on characters outside the alphabet or anything after the '=' padding.
bool Base64UrlDecode(std::string_view text, std::string& out);
bool Base64Decode(std::string_view text, std::string& out);  // standard alphabet (+, /)

// Time depends only on the lengths, never on where the inputs differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// argon2id in libsodium's encoded form ("$argon2id$v=19$..."). Slow on purpose (tens of ms):
// call from the blocking pool. Returns an empty string only if memory is exhausted.
std::string HashPassword(std::string_view password);
bool VerifyPassword(std::string_view password, std::string_view encoded_hash);

}  // namespace sb::util
