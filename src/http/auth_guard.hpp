// The router's authentication step (contract §2): X-API-Key alone decides when present;
// otherwise a Bearer credential is tried as a JWT, then as an API key; then the route's class
// decides whether that kind is accepted.
#pragma once

#include "http/router.hpp"
#include "services/auth_service.hpp"

namespace sb::http {

class AuthGuard final : public Authenticator {
 public:
  explicit AuthGuard(services::AuthService& auth) : auth_(auth) {}
  util::Result<Principal> Authenticate(const Request& request, AuthClass auth) override;
  std::optional<util::Result<Principal>> AuthenticateWithoutBlocking(const Request& request,
                                                                     AuthClass auth) override;

 private:
  std::optional<util::Result<Principal>> Resolve(const Request& request, AuthClass auth,
                                                 bool may_block);

  services::AuthService& auth_;
};

}  // namespace sb::http
