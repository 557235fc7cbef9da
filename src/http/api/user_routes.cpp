#include "http/api/api.hpp"
#include "http/api/field_reader.hpp"
#include "http/api/handler_support.hpp"
#include "util/crypto.hpp"

namespace sb::http::api {

void RegisterUserRoutes(Router& router, ApiContext& ctx) {
  router.Add({"GET", "/api/v1/user/init", AuthClass::kNone, [&ctx](Request& req) {
                auto init = ctx.auth.IsInitialized();
                if (!init) return Fail(req, init.error());
                return JsonOk(util::JsonObject{{"initialized", *init}});
              }});

  router.Add(
      {"POST", "/api/v1/user/init", AuthClass::kNone, [&ctx](Request& req) {
         auto body = FieldReader::Parse(req.body);
         if (!body) return Fail(req, body.error());
         auto user = body->RequiredString("user");
         auto password = body->RequiredString("password");
         auto code = body->OptionalString("setup_code");
         if (auto e = body->error()) return Fail(req, *e);
         // Until an admin exists anyone who can reach the port could claim the instance:
         // only a local client or one holding the setup code printed at start may.
         std::string presented = code.value_or(std::string(req.Header("x-setup-code")));
         if (!req.from_loopback && !(!ctx.options.setup_code.empty() &&
                                     util::ConstantTimeEquals(presented, ctx.options.setup_code))) {
           auto init = ctx.auth.IsInitialized();
           if (init && *init) {
             return Fail(req, {util::ErrorCode::kConflict, "the instance is already initialized"});
           }
           return Fail(req, {util::ErrorCode::kPermissionDenied,
                             "initialization from a remote address needs the setup code "
                             "printed at start (setup_code or X-Setup-Code)"});
         }
         auto r = ctx.auth.InitAdmin(user, password);
         if (!r) return Fail(req, r.error());
         return JsonOkNoData();
       }});

  router.Add(
      {"POST", "/api/v1/user/auth", AuthClass::kNone,
       [&ctx](Request& req) {
         auto body = FieldReader::Parse(req.body);
         if (!body) return Fail(req, body.error());
         auto user = body->RequiredString("user");
         auto password = body->RequiredString("password");
         if (auto e = body->error()) return Fail(req, *e);
         auto token = ctx.auth.Login(user, password, req.remote_address);
         if (!token) return Fail(req, token.error());
         return JsonOk(util::JsonObject{{"token", *token}});
       },
       Execution::kBlocking,
       // A login flood is turned away here, on the I/O thread, before it queues for the pool.
       [&ctx](Request& req) -> std::optional<Response> {
         constexpr std::size_t kMaxInlineBody = 4096;  // larger ones are parsed on the pool
         if (req.body.size() > kMaxInlineBody) return std::nullopt;
         auto body = FieldReader::Parse(req.body);
         if (!body) return std::nullopt;
         auto user = body->RequiredString("user");
         if (body->error()) return std::nullopt;
         auto refused = ctx.auth.LoginRefusal(user, req.remote_address);
         if (!refused) return std::nullopt;
         return Fail(req, *refused);
       }});

  router.Add({"GET", "/api/v1/user/account-info", AuthClass::kNone, [&ctx](Request& req) {
                auto init = ctx.auth.IsInitialized();
                if (!init) return Fail(req, init.error());
                if (!*init) return JsonOk(util::JsonObject{{"initialized", false}});
                return JsonOk(util::JsonObject{
                    {"initialized", true}, {"account_type", "local"}, {"has_password", true}});
              }});

  router.Add({"GET", "/api/v1/user/info", AuthClass::kUserOnly, [&ctx](Request& req) {
                auto user = ctx.auth.GetUser(req.principal.username);
                if (!user) return Fail(req, user.error());
                return JsonOk(util::JsonObject{{"user", user->username},
                                               {"account_type", "local"},
                                               {"has_password", !user->password_hash.empty()}});
              }});

  router.Add({"GET", "/api/v1/user/check-token", AuthClass::kUserOnly, [&ctx](Request& req) {
                // The route's authentication refused a token of an older generation, so a renewal
                // never brings back one that a password change ended.
                auto token = ctx.auth.RenewToken(req.principal.username);
                if (!token) return Fail(req, token.error());
                return JsonOk(util::JsonObject{{"token", *token}});
              }});

  router.Add({"POST", "/api/v1/user/change-password", AuthClass::kUserOnly, [&ctx](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                auto current = body->RequiredString("current_password");
                auto next = body->RequiredString("new_password");
                if (auto e = body->error()) return Fail(req, *e);
                auto r = ctx.auth.ChangePassword(req.principal.username, current, next);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});

  // LangBot's console offers this to accounts that signed up through LangBot Space and have no
  // password yet. Every account here is local and has one, so it is a change of password: the
  // current one is required, as LangBot requires it of an account that has one.
  router.Add({"POST", "/api/v1/user/set-password", AuthClass::kUserOnly, [&ctx](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                auto next = body->RequiredString("new_password");
                auto current = body->RequiredString("current_password");
                if (auto e = body->error()) return Fail(req, *e);
                auto r = ctx.auth.ChangePassword(req.principal.username, current, next);
                if (!r) return Fail(req, r.error());
                return JsonOk(util::JsonObject{{"user", req.principal.username}});
              }});

  // LangBot Space (LangBot's cloud accounts and credits) is not part of Switchboard: accounts
  // are local, so there are no credits to show (LangBot answers null for a local account too)
  // and the Space sign-in routes say so rather than pretending.
  router.Add({"GET", "/api/v1/user/space-credits", AuthClass::kUserOnly, [](Request&) {
                return JsonOk(util::JsonObject{{"credits", nullptr}});
              }});
  for (const char* path : {"/api/v1/user/space/authorize-url", "/api/v1/user/space/callback",
                           "/api/v1/user/bind-space"}) {
    const std::string method = std::string_view(path).ends_with("authorize-url") ? "GET" : "POST";
    router.Add({method, path, AuthClass::kNone, [](Request& req) {
                  return Fail(req, util::Error{util::ErrorCode::kInvalidArgument,
                                               "LangBot Space accounts are not supported here: "
                                               "sign in with the local account"});
                }});
  }

  router.Add({"POST", "/api/v1/user/reset-password", AuthClass::kNone, [&ctx](Request& req) {
                auto body = FieldReader::Parse(req.body);
                if (!body) return Fail(req, body.error());
                auto user = body->RequiredString("user");
                auto key = body->RequiredString("recovery_key");
                auto next = body->RequiredString("new_password");
                if (auto e = body->error()) return Fail(req, *e);
                auto r = ctx.auth.ResetPassword(user, key, next, req.remote_address);
                if (!r) return Fail(req, r.error());
                return JsonOkNoData();
              }});
}

}  // namespace sb::http::api
