#include "platforms/common/ed25519.hpp"

#include "util/crypto.hpp"

namespace sb::platforms::common {
namespace {

constexpr std::size_t kSeedBytes = 32;

util::Result<void> VerifyRaw(std::string_view public_key, std::string_view message,
                             std::string_view hex_signature) {
  std::string signature;
  if (!util::HexDecode(hex_signature, signature) || signature.size() != 64 ||
      !util::Ed25519Verify(public_key, message, signature)) {
    return util::Fail(util::ErrorCode::kUnauthenticated, "the Ed25519 signature does not match");
  }
  return util::Ok();
}

}  // namespace

util::Result<std::string> QqBotSeed(std::string_view bot_secret) {
  if (bot_secret.empty()) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the QQ bot secret is empty");
  }
  std::string seed;
  seed.reserve(kSeedBytes + bot_secret.size());
  while (seed.size() < kSeedBytes) seed.append(bot_secret);
  seed.resize(kSeedBytes);
  return seed;
}

util::Result<std::string> QqBotSign(std::string_view bot_secret, std::string_view message) {
  auto seed = QqBotSeed(bot_secret);
  if (!seed) return tl::make_unexpected(seed.error());
  return util::HexEncode(util::Ed25519Sign(*seed, message));
}

util::Result<void> QqBotVerify(std::string_view bot_secret, std::string_view message,
                               std::string_view hex_signature) {
  auto seed = QqBotSeed(bot_secret);
  if (!seed) return tl::make_unexpected(seed.error());
  return VerifyRaw(util::Ed25519PublicKey(*seed), message, hex_signature);
}

util::Result<void> Ed25519VerifyHex(std::string_view hex_public_key, std::string_view message,
                                    std::string_view hex_signature) {
  std::string public_key;
  if (!util::HexDecode(hex_public_key, public_key) || public_key.size() != 32) {
    return util::Fail(util::ErrorCode::kInvalidArgument,
                      "the Ed25519 public key is not 64 hex digits");
  }
  return VerifyRaw(public_key, message, hex_signature);
}

}  // namespace sb::platforms::common
