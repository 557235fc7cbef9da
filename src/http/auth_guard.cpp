#include "http/auth_guard.hpp"

#include <algorithm>

namespace sb::http {
namespace {

using util::ErrorCode;
using util::Fail;

bool LooksLikeJwt(std::string_view token) {
  return std::count(token.begin(), token.end(), '.') == 2;
}

}  // namespace

util::Result<Principal> AuthGuard::Authenticate(const Request& request, AuthClass auth) {
  Principal principal;
  const std::string_view api_key_header = request.Header("x-api-key");
  std::string_view bearer;
  const std::string_view authorization = request.Header("authorization");
  if (authorization.size() > 7 &&
      (authorization.substr(0, 7) == "Bearer " || authorization.substr(0, 7) == "bearer ")) {
    bearer = authorization.substr(7);
    while (!bearer.empty() && bearer.front() == ' ') bearer.remove_prefix(1);
  }

  if (!api_key_header.empty()) {
    auto key = auth_.VerifyApiKey(api_key_header);
    if (!key) return tl::unexpected(key.error());
    principal.kind = Principal::Kind::kApiKey;
    principal.api_key_id = key->id;
  } else if (!bearer.empty()) {
    if (LooksLikeJwt(bearer)) {
      auto user = auth_.VerifyToken(bearer);
      if (!user) return tl::unexpected(user.error());
      principal.kind = Principal::Kind::kUser;
      principal.username = std::move(*user);
    } else {
      auto key = auth_.VerifyApiKey(bearer);
      if (!key) return tl::unexpected(key.error());
      principal.kind = Principal::Kind::kApiKey;
      principal.api_key_id = key->id;
    }
  } else {
    return Fail(ErrorCode::kUnauthenticated,
                "missing credential: send Authorization: Bearer <token or API key> or X-API-Key");
  }

  if (auth == AuthClass::kApiKeyOnly && principal.kind != Principal::Kind::kApiKey) {
    return Fail(ErrorCode::kUnauthenticated, "this route accepts an API key only");
  }
  if (auth == AuthClass::kUserOnly && principal.kind != Principal::Kind::kUser) {
    return Fail(ErrorCode::kUnauthenticated, "this route accepts a user token only");
  }
  return principal;
}

}  // namespace sb::http
