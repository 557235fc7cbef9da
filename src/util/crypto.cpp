#include "util/crypto.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sodium.h>

#include <climits>
#include <cstdlib>
#include <memory>

namespace sb::util {
namespace {

constexpr char kUrlAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

struct SodiumInit {
  SodiumInit() {
    if (sodium_init() < 0) std::abort();
  }
};

void EnsureSodium() { static SodiumInit once; }

}  // namespace

void RandomBytes(unsigned char* out, std::size_t n) {
  if (RAND_bytes(out, static_cast<int>(n)) != 1) std::abort();
}

std::string RandomUrlSafe(std::size_t n) {
  std::string out;
  out.reserve(n);
  unsigned char buf[64];
  while (out.size() < n) {
    RandomBytes(buf, sizeof buf);
    // 64 symbols divide 256 evenly, so masking keeps the distribution uniform.
    for (unsigned char b : buf) {
      if (out.size() == n) break;
      out.push_back(kUrlAlphabet[b & 63]);
    }
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(md), len));
}

std::string Sha256(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string Sha1Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha1(), nullptr);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(md), len));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len);
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0x0f]);
  }
  return out;
}

bool HexDecode(std::string_view hex, std::string& out) {
  out.clear();
  if (hex.size() % 2 != 0) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]);
    const int lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      out.clear();
      return false;
    }
    out.push_back(static_cast<char>((hi << 4) | lo));
  }
  return true;
}

namespace {

bool Aes256Cbc(bool encrypt, std::string_view key, std::string_view iv, std::string_view data,
               std::string& out) {
  out.clear();
  if (key.size() != 32 || iv.size() != 16 || data.size() % 16 != 0 ||
      data.size() > static_cast<std::size_t>(INT_MAX)) {
    return false;
  }
  if (data.empty()) return true;
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(),
                                                                      &EVP_CIPHER_CTX_free);
  if (!ctx) return false;
  const auto* k = reinterpret_cast<const unsigned char*>(key.data());
  const auto* v = reinterpret_cast<const unsigned char*>(iv.data());
  if (EVP_CipherInit_ex(ctx.get(), EVP_aes_256_cbc(), nullptr, k, v, encrypt ? 1 : 0) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx.get(), 0) != 1) {
    return false;
  }
  out.resize(data.size());
  int len = 0;
  int tail = 0;
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (EVP_CipherUpdate(ctx.get(), o, &len, reinterpret_cast<const unsigned char*>(data.data()),
                       static_cast<int>(data.size())) != 1 ||
      EVP_CipherFinal_ex(ctx.get(), o + len, &tail) != 1 ||
      static_cast<std::size_t>(len + tail) != data.size()) {
    out.clear();
    return false;
  }
  return true;
}

}  // namespace

bool Aes256CbcEncrypt(std::string_view key, std::string_view iv, std::string_view data,
                      std::string& out) {
  return Aes256Cbc(true, key, iv, data, out);
}

bool Aes256CbcDecrypt(std::string_view key, std::string_view iv, std::string_view data,
                      std::string& out) {
  return Aes256Cbc(false, key, iv, data, out);
}

std::string Ed25519PublicKey(std::string_view seed) {
  if (seed.size() != crypto_sign_SEEDBYTES) return {};
  EnsureSodium();
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_seed_keypair(pk, sk, reinterpret_cast<const unsigned char*>(seed.data()));
  sodium_memzero(sk, sizeof sk);
  return std::string(reinterpret_cast<const char*>(pk), sizeof pk);
}

std::string Ed25519Sign(std::string_view seed, std::string_view message) {
  if (seed.size() != crypto_sign_SEEDBYTES) return {};
  EnsureSodium();
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_seed_keypair(pk, sk, reinterpret_cast<const unsigned char*>(seed.data()));
  unsigned char sig[crypto_sign_BYTES];
  crypto_sign_detached(sig, nullptr, reinterpret_cast<const unsigned char*>(message.data()),
                       message.size(), sk);
  sodium_memzero(sk, sizeof sk);
  return std::string(reinterpret_cast<const char*>(sig), sizeof sig);
}

bool Ed25519Verify(std::string_view public_key, std::string_view message,
                   std::string_view signature) {
  if (public_key.size() != crypto_sign_PUBLICKEYBYTES || signature.size() != crypto_sign_BYTES) {
    return false;
  }
  EnsureSodium();
  return crypto_sign_verify_detached(
             reinterpret_cast<const unsigned char*>(signature.data()),
             reinterpret_cast<const unsigned char*>(message.data()), message.size(),
             reinterpret_cast<const unsigned char*>(public_key.data())) == 0;
}

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto at = [&](size_t k) { return static_cast<unsigned char>(bytes[k]); };
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out.push_back(kUrlAlphabet[(v >> 18) & 63]);
    out.push_back(kUrlAlphabet[(v >> 12) & 63]);
    out.push_back(kUrlAlphabet[(v >> 6) & 63]);
    out.push_back(kUrlAlphabet[v & 63]);
  }
  if (bytes.size() - i == 1) {
    const unsigned v = at(i) << 16;
    out.push_back(kUrlAlphabet[(v >> 18) & 63]);
    out.push_back(kUrlAlphabet[(v >> 12) & 63]);
  } else if (bytes.size() - i == 2) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8);
    out.push_back(kUrlAlphabet[(v >> 18) & 63]);
    out.push_back(kUrlAlphabet[(v >> 12) & 63]);
    out.push_back(kUrlAlphabet[(v >> 6) & 63]);
  }
  return out;
}

namespace {

// Both alphabets differ only in characters 62 and 63. Padding ('=') may end the text; nothing
// but more padding may follow it.
bool DecodeWithAlphabet(std::string_view text, char c62, char c63, std::string& out) {
  out.clear();
  out.reserve(text.size() / 4 * 3);
  unsigned buffer = 0;
  int bits = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] != '='; ++i) {
    const char c = text[i];
    int v;
    if (c >= 'A' && c <= 'Z') {
      v = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      v = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      v = c - '0' + 52;
    } else if (c == c62) {
      v = 62;
    } else if (c == c63) {
      v = 63;
    } else {
      return false;
    }
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  for (; i < text.size(); ++i) {
    if (text[i] != '=') return false;
  }
  return true;
}

}  // namespace

bool Base64UrlDecode(std::string_view text, std::string& out) {
  return DecodeWithAlphabet(text, '-', '_', out);
}

bool Base64Decode(std::string_view text, std::string& out) {
  return DecodeWithAlphabet(text, '+', '/', out);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string HashPassword(std::string_view password) {
  EnsureSodium();
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
    return {};
  }
  return std::string(out);
}

bool VerifyPassword(std::string_view password, std::string_view encoded_hash) {
  EnsureSodium();
  const std::string hash(encoded_hash);
  return crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
}

}  // namespace sb::util
