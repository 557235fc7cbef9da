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
  return *Resolve(request, auth, /*may_block=*/true);
}

std::optional<util::Result<Principal>> AuthGuard::AuthenticateWithoutBlocking(
    const Request& request, AuthClass auth) {
  return Resolve(request, auth, /*may_block=*/false);
}

std::optional<util::Result<Principal>> AuthGuard::Resolve(const Request& request, AuthClass auth,
                                                          bool may_block) {
  auto api_key = [&](std::string_view key) -> std::optional<util::Result<domain::ApiKey>> {
    if (may_block) return auth_.VerifyApiKey(key);
    return auth_.VerifyApiKeyCached(key);
  };
  auto token = [&](std::string_view jwt) -> std::optional<util::Result<std::string>> {
    if (may_block) return auth_.VerifyToken(jwt);
    return auth_.VerifyTokenCached(jwt);
  };

  using Answer = util::Result<Principal>;
  auto deny = [](std::string message) -> Answer {
    return Fail(ErrorCode::kUnauthenticated, std::move(message));
  };
  Principal principal;
  const std::string_view api_key_header = request.Header("x-api-key");
  std::string_view bearer;
  const std::string_view authorization = request.Header("authorization");
  if (authorization.size() > 7 &&
      (authorization.substr(0, 7) == "Bearer " || authorization.substr(0, 7) == "bearer ")) {
    bearer = authorization.substr(7);
    while (!bearer.empty() && bearer.front() == ' ') bearer.remove_prefix(1);
  }

  const std::string_view presented_key =
      !api_key_header.empty() ? api_key_header : (LooksLikeJwt(bearer) ? "" : bearer);
  if (!presented_key.empty()) {
    auto key = api_key(presented_key);
    if (!key) return std::nullopt;
    if (!*key) return Answer(tl::unexpected(key->error()));
    principal.kind = Principal::Kind::kApiKey;
    principal.api_key_id = (*key)->id;
  } else if (!bearer.empty()) {
    auto user = token(bearer);
    if (!user) return std::nullopt;
    if (!*user) return Answer(tl::unexpected(user->error()));
    principal.kind = Principal::Kind::kUser;
    principal.username = std::move(**user);
  } else {
    return deny("missing credential: send Authorization: Bearer <token or API key> or X-API-Key");
  }

  if (auth == AuthClass::kApiKeyOnly && principal.kind != Principal::Kind::kApiKey) {
    return deny("this route accepts an API key only");
  }
  if (auth == AuthClass::kUserOnly && principal.kind != Principal::Kind::kUser) {
    return deny("this route accepts a user token only");
  }
  return Answer(std::move(principal));
}

}  // namespace sb::http
