#include "util/secret_box.hpp"

#include <sodium.h>

#include <cstdlib>
#include <vector>

#include "util/crypto.hpp"

namespace sb::util {
namespace {

constexpr std::string_view kPrefix = "sbenc1:";
constexpr std::string_view kKeyLabel = "switchboard secrets at rest v1";

}  // namespace

SecretBox SecretBox::FromKeyMaterial(std::string_view material) {
  // HMAC as a key-derivation step: the key file's text becomes exactly 32 uniform bytes, and the
  // label keeps this key apart from any other use of the same material.
  const std::string derived = HmacSha256(material, kKeyLabel);
  std::array<unsigned char, 32> key{};
  static_assert(crypto_aead_xchacha20poly1305_ietf_KEYBYTES == 32);
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<unsigned char>(derived[i]);
  if (sodium_init() < 0) std::abort();
  return SecretBox(key);
}

bool SecretBox::IsSealed(std::string_view stored) {
  return stored.substr(0, kPrefix.size()) == kPrefix;
}

std::string SecretBox::Seal(std::string_view plaintext, std::string_view context) const {
  constexpr std::size_t kNonce = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
  std::vector<unsigned char> out(kNonce + plaintext.size() +
                                 crypto_aead_xchacha20poly1305_ietf_ABYTES);
  randombytes_buf(out.data(), kNonce);
  unsigned long long sealed_size = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(
      out.data() + kNonce, &sealed_size, reinterpret_cast<const unsigned char*>(plaintext.data()),
      plaintext.size(), reinterpret_cast<const unsigned char*>(context.data()), context.size(),
      nullptr, out.data(), key_.data());
  const std::string_view bytes(reinterpret_cast<const char*>(out.data()),
                               kNonce + static_cast<std::size_t>(sealed_size));
  return std::string(kPrefix) + Base64UrlEncode(bytes);
}

Result<std::string> SecretBox::Open(std::string_view stored, std::string_view context) const {
  if (!IsSealed(stored)) return std::string(stored);
  constexpr std::size_t kNonce = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
  constexpr std::size_t kTag = crypto_aead_xchacha20poly1305_ietf_ABYTES;
  std::string bytes;
  if (!Base64UrlDecode(stored.substr(kPrefix.size()), bytes) || bytes.size() < kNonce + kTag) {
    return Fail(ErrorCode::kInternal, "a sealed secret in the database is malformed");
  }
  std::string plain(bytes.size() - kNonce - kTag, '\0');
  unsigned long long plain_size = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          reinterpret_cast<unsigned char*>(plain.data()), &plain_size, nullptr, data + kNonce,
          bytes.size() - kNonce, reinterpret_cast<const unsigned char*>(context.data()),
          context.size(), data, key_.data()) != 0) {
    return Fail(ErrorCode::kInternal,
                "a sealed secret in the database does not open with this data directory's "
                "secrets key (was the key file replaced, or the row altered?)");
  }
  plain.resize(static_cast<std::size_t>(plain_size));
  return plain;
}

}  // namespace sb::util
