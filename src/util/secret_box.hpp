// Secrets at rest (provider API keys, bot adapter configs): sealed with XChaCha20-Poly1305 under
// a key kept in the data directory, so a copied database file alone reveals nothing.
//   auto box = SecretBox::FromKeyMaterial(key_file_text);      // at start-up
//   std::string stored = box.Seal(api_keys_json, "providers.api_keys:" + uuid);
//   auto plain = box.Open(stored, "providers.api_keys:" + uuid);  // the same context
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace sb::util {

// Immutable after construction, so thread-safe; cheap to copy.
class SecretBox {
 public:
  // The key is derived from `material` (at least 32 random bytes of text, such as the key file's
  // content), so any length of material gives a full-strength key.
  static SecretBox FromKeyMaterial(std::string_view material);

  // "sbenc1:" + base64url(nonce || ciphertext || tag), with a fresh random nonce each call.
  // `context` (table, column and row) is authenticated: a sealed value copied to another row or
  // column does not open there.
  std::string Seal(std::string_view plaintext, std::string_view context) const;

  // The plaintext of a sealed value. A value without the "sbenc1:" prefix is a row written before
  // encryption existed and is returned as it is. kInternal when the value was sealed under
  // another key or context, or was altered.
  Result<std::string> Open(std::string_view stored, std::string_view context) const;

  static bool IsSealed(std::string_view stored);

 private:
  explicit SecretBox(const std::array<unsigned char, 32>& key) : key_(key) {}
  std::array<unsigned char, 32> key_;
};

}  // namespace sb::util
