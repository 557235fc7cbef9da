// Cryptographic primitives used by auth and, later, platform signatures: random bytes, SHA-256,
// HMAC-SHA256, base64url, argon2id password hashing and constant-time comparison.
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
// Raw 32-byte MAC.
std::string HmacSha256(std::string_view key, std::string_view data);
std::string HexEncode(std::string_view bytes);

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
