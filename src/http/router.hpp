// Routes by verb + path template ("/api/v1/pipelines/{pipeline_uuid}"; a last "{rest...}" takes
// one or more remaining segments), with an auth class per route, and runs the handler with the
// error-to-envelope rules of contract §1.
//   router.Add({"GET", "/api/v1/system/info", AuthClass::kNone, handler, Execution::kInline});
//   RouteMatch m = router.Match(req);         // in the session, to pick the thread
//   Response res = router.Handle(m, req);     // authenticate, call, catch
//   router.SetFallback(console);              // for paths no route has: the web console
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/request.hpp"
#include "http/websocket.hpp"
#include "util/error.hpp"

namespace sb::http {

// Which credentials a route accepts (contract §2).
enum class AuthClass { kNone, kApiKeyOnly, kUserOnly, kEither };

const char* AuthClassName(AuthClass auth);

// kInline handlers never block (no SQL, no hashing) and run on the I/O thread; kBlocking ones run
// on the blocking pool.
enum class Execution { kInline, kBlocking };

using Handler = std::function<Response(Request&)>;
// Answers from memory (a cache) without blocking, or nullopt to fall back to the Handler.
using FastHandler = std::function<std::optional<Response>(Request&)>;
// For work that waits on an external service: the handler starts it (on the blocking pool, so it
// may read the database first) and calls `respond` exactly once, from any thread, possibly long
// after returning. The request stays valid until then. A Respond dropped without being called
// answers 500, so a forgotten path cannot hang the connection.
using Respond = std::function<void(Response)>;
using AsyncHandler = std::function<void(Request&, Respond)>;
// Asked for a request whose path no route has (with any verb), on the I/O thread, before the
// JSON 404: the answer, or nullopt to keep the 404. Must not block (the web console).
using Fallback = std::function<std::optional<Response>(const Request&)>;

struct Route {
  std::string method;
  std::string path_template;
  AuthClass auth = AuthClass::kEither;
  Handler handler;
  Execution execution = Execution::kBlocking;
  FastHandler fast_path = {};       // optional, tried on the I/O thread before a kBlocking handler
  AsyncHandler async_handler = {};  // when set, used instead of `handler`
  // When set (GET routes only), the route takes a WebSocket upgrade instead of `handler`; a plain
  // request answers 400, or goes to `async_handler` when the route has one (the bots' URLs).
  WebSocketAccept websocket = {};
  // WebSocket routes only: an upgrade that presents no credential at all is let in, as an
  // anonymous principal, when this returns true (the debug chat's opt-in for LangBot's console,
  // which opens its socket without one). A wrong credential is refused all the same.
  std::function<bool(const Request&)> admit_anonymous = {};
};

// Establishes the principal of a request for a route's auth class. Thread-safe.
class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // kUnauthenticated when the credential is absent, invalid or of the wrong kind.
  virtual util::Result<Principal> Authenticate(const Request& request, AuthClass auth) = 0;
  // The same answer when it can be given from memory; nullopt when it needs blocking work.
  virtual std::optional<util::Result<Principal>> AuthenticateWithoutBlocking(const Request& request,
                                                                             AuthClass auth) {
    (void)request;
    (void)auth;
    return std::nullopt;
  }
};

struct RouteMatch {
  const Route* route = nullptr;  // nullptr: 404 or 405
  bool path_known = false;       // some route has this path with another verb (405)
  std::string allowed_methods;   // for the Allow header of a 405: "GET, POST"
  std::vector<std::pair<std::string, std::string>> params;
};

class Router {
 public:
  explicit Router(Authenticator& authenticator);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Not thread-safe; call before the server starts. Throws std::logic_error on a duplicate.
  void Add(Route route);
  // Not thread-safe; call before the server starts. Replaces any earlier fallback.
  void SetFallback(Fallback fallback);

  // Thread-safe after start.
  RouteMatch Match(const Request& request) const;
  // Authenticates, runs the handler and turns anything it throws into a 500 with the request id.
  Response Handle(const RouteMatch& match, Request& request) const;
  // For routes with an async_handler, on the blocking pool: authenticates and starts the
  // handler; `respond` is called exactly once (see AsyncHandler).
  void HandleAsync(const RouteMatch& match, Request& request, Respond respond) const;
  // On the I/O thread: the response when it needs no blocking work (kInline routes, and fast
  // paths that hit), nullopt when Handle must run on the blocking pool.
  std::optional<Response> TryHandleWithoutBlocking(const RouteMatch& match, Request& request) const;
  // For an upgrade request to a route with `websocket`, on the blocking pool: authenticates and
  // runs the route's accept function (a throw becomes kInternal). An error is the HTTP answer.
  util::Result<WebSocketHandlers> AcceptWebSocket(const RouteMatch& match, Request& request,
                                                  std::shared_ptr<WebSocketPeer> peer) const;

  const std::vector<std::unique_ptr<Route>>& routes() const { return routes_; }

 private:
  struct Compiled;
  Authenticator& authenticator_;
  std::vector<std::unique_ptr<Route>> routes_;
  std::vector<Compiled> compiled_;
  Fallback fallback_;
};

}  // namespace sb::http
