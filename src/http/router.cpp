#include "http/router.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <stdexcept>
#include <string_view>

#include "http/envelope.hpp"
#include "util/log_text.hpp"

namespace sb::http {
namespace {

Response NotAnUpgrade(const Request& request) {
  return JsonError({util::ErrorCode::kInvalidArgument, "this endpoint takes a WebSocket upgrade"},
                   request.request_id);
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

}  // namespace

const char* AuthClassName(AuthClass auth) {
  switch (auth) {
    case AuthClass::kNone:
      return "none";
    case AuthClass::kApiKeyOnly:
      return "api-key-only";
    case AuthClass::kUserOnly:
      return "user-only";
    case AuthClass::kEither:
      return "either";
  }
  return "either";
}

struct Router::Compiled {
  const Route* route;
  std::vector<std::string> segments;  // parameter names where is_param
  std::vector<bool> is_param;
  int literal_count = 0;
  bool tail = false;  // the last parameter is "{name...}": one or more remaining segments
};

Router::Router(Authenticator& authenticator) : authenticator_(authenticator) {}
Router::~Router() = default;

void Router::Add(Route route) {
  if (route.websocket && route.method != "GET") {
    throw std::logic_error("a WebSocket route takes GET: " + route.path_template);
  }
  if (route.admit_anonymous && !route.websocket) {
    throw std::logic_error("only a WebSocket route may admit anonymous upgrades: " +
                           route.path_template);
  }
  Compiled c;
  for (auto part : SplitPath(route.path_template)) {
    if (c.tail)
      throw std::logic_error("a {name...} parameter must come last: " + route.path_template);
    const bool param = part.size() > 2 && part.front() == '{' && part.back() == '}';
    std::string_view name = param ? part.substr(1, part.size() - 2) : part;
    if (param && name.size() > 3 && name.substr(name.size() - 3) == "...") {
      name.remove_suffix(3);
      c.tail = true;
    }
    c.segments.emplace_back(name);
    c.is_param.push_back(param);
    if (!param) ++c.literal_count;
  }
  // Two templates clash when they differ only in parameter names.
  auto same_shape = [&c](const Compiled& other) {
    if (other.is_param != c.is_param || other.tail != c.tail) return false;
    for (size_t i = 0; i < c.segments.size(); ++i) {
      if (!c.is_param[i] && c.segments[i] != other.segments[i]) return false;
    }
    return true;
  };
  for (const auto& other : compiled_) {
    if (other.route->method == route.method && same_shape(other)) {
      throw std::logic_error("duplicate route " + route.method + " " + route.path_template);
    }
  }
  routes_.push_back(std::make_unique<Route>(std::move(route)));
  c.route = routes_.back().get();
  compiled_.push_back(std::move(c));
}

void Router::SetFallback(Fallback fallback) { fallback_ = std::move(fallback); }

RouteMatch Router::Match(const Request& request) const {
  RouteMatch best;
  int best_literals = -1;
  const auto parts = SplitPath(request.path);
  // HEAD is answered by the GET route (RFC 9110 §9.3.2); the server leaves out the body.
  std::string_view method = request.method;
  if (method == "HEAD") method = "GET";
  auto allow = [&best](std::string_view m) {
    if (best.allowed_methods.find(m) != std::string::npos) return;
    if (!best.allowed_methods.empty()) best.allowed_methods += ", ";
    best.allowed_methods += m;
  };
  for (const auto& c : compiled_) {
    if (c.tail ? parts.size() < c.segments.size() : parts.size() != c.segments.size()) continue;
    bool ok = true;
    for (size_t i = 0; i < c.segments.size() && ok; ++i) {
      ok = c.is_param[i] ? !parts[i].empty() : parts[i] == c.segments[i];
    }
    if (!ok) continue;
    if (c.route->method != method) {
      best.path_known = true;
      allow(c.route->method);
      if (c.route->method == "GET") allow("HEAD");
      continue;
    }
    // Literal segments beat parameters: /pipelines/_/metadata wins over /pipelines/{uuid}/x.
    if (c.literal_count <= best_literals) continue;
    best_literals = c.literal_count;
    best.route = c.route;
    best.params.clear();
    for (size_t i = 0; i < c.segments.size(); ++i) {
      if (!c.is_param[i]) continue;
      std::string value(parts[i]);
      if (c.tail && i + 1 == c.segments.size()) {
        for (size_t j = i + 1; j < parts.size(); ++j) (value += '/') += parts[j];
      }
      best.params.emplace_back(c.segments[i], std::move(value));
    }
  }
  return best;
}

std::optional<Response> Router::TryHandleWithoutBlocking(const RouteMatch& match,
                                                         Request& request) const {
  if (!match.route) return Handle(match, request);
  // Credentials first, as on every route (Handle): a stranger learns nothing about the route.
  if (match.route->websocket) return std::nullopt;
  if (match.route->async_handler) return std::nullopt;
  const bool inline_route = match.route->execution == Execution::kInline;
  if (!inline_route && !match.route->fast_path) return std::nullopt;
  request.path_params = match.params;
  if (match.route->auth != AuthClass::kNone) {
    auto principal = authenticator_.AuthenticateWithoutBlocking(request, match.route->auth);
    if (!principal) return std::nullopt;
    if (!*principal) return JsonError(principal->error(), request.request_id);
    request.principal = std::move(**principal);
  }
  try {
    return inline_route ? match.route->handler(request) : match.route->fast_path(request);
  } catch (const std::exception& e) {
    spdlog::error("request {} {} {} failed: {}", request.request_id, request.method,
                  util::EscapeForLog(request.path), e.what());
  }
  return JsonError({util::ErrorCode::kInternal, "handler threw"}, request.request_id);
}

namespace {

// Calls the wrapped Respond once; later calls are ignored, and destruction without a call
// answers 500 so the connection never waits forever.
class RespondOnce {
 public:
  RespondOnce(Respond respond, std::string request_id)
      : respond_(std::move(respond)), request_id_(std::move(request_id)) {}
  ~RespondOnce() {
    if (!done_.exchange(true)) {
      spdlog::error("request {} finished without a response", request_id_);
      respond_(JsonError({util::ErrorCode::kInternal, "no response"}, request_id_));
    }
  }
  void operator()(Response r) {
    if (!done_.exchange(true)) respond_(std::move(r));
  }

 private:
  Respond respond_;
  std::string request_id_;
  std::atomic<bool> done_{false};
};

}  // namespace

void Router::HandleAsync(const RouteMatch& match, Request& request, Respond respond) const {
  auto once = std::make_shared<RespondOnce>(std::move(respond), request.request_id);
  request.path_params = match.params;
  if (match.route->auth != AuthClass::kNone) {
    auto principal = authenticator_.Authenticate(request, match.route->auth);
    if (!principal) return (*once)(JsonError(principal.error(), request.request_id));
    request.principal = std::move(*principal);
  }
  try {
    match.route->async_handler(request, [once](Response r) { (*once)(std::move(r)); });
  } catch (const std::exception& e) {
    spdlog::error("request {} {} {} failed: {}", request.request_id, request.method,
                  util::EscapeForLog(request.path), e.what());
    (*once)(JsonError({util::ErrorCode::kInternal, "handler threw"}, request.request_id));
  } catch (...) {
    spdlog::error("request {} {} {} failed with a non-standard exception", request.request_id,
                  request.method, util::EscapeForLog(request.path));
    (*once)(JsonError({util::ErrorCode::kInternal, "handler threw"}, request.request_id));
  }
}

Response Router::Handle(const RouteMatch& match, Request& request) const {
  if (!match.route) {
    if (match.path_known) {
      Response r = JsonError({util::ErrorCode::kInvalidArgument,
                              "method " + request.method + " is not allowed on " + request.path},
                             request.request_id);
      r.status = 405;
      r.headers.emplace_back("Allow", match.allowed_methods);
      return r;
    }
    if (fallback_) {
      try {
        if (auto answer = fallback_(request)) return std::move(*answer);
      } catch (const std::exception& e) {
        spdlog::error("request {} {} {} failed: {}", request.request_id, request.method,
                      util::EscapeForLog(request.path), e.what());
        return JsonError({util::ErrorCode::kInternal, "handler threw"}, request.request_id);
      }
    }
    return JsonError({util::ErrorCode::kNotFound, "no route for " + request.path},
                     request.request_id);
  }
  request.path_params = match.params;
  if (match.route->auth != AuthClass::kNone) {
    auto principal = authenticator_.Authenticate(request, match.route->auth);
    if (!principal) return JsonError(principal.error(), request.request_id);
    request.principal = std::move(*principal);
  }
  if (match.route->websocket) return NotAnUpgrade(request);
  try {
    return match.route->handler(request);
  } catch (const std::exception& e) {
    spdlog::error("request {} {} {} failed: {}", request.request_id, request.method,
                  util::EscapeForLog(request.path), e.what());
  } catch (...) {
    spdlog::error("request {} {} {} failed with a non-standard exception", request.request_id,
                  request.method, util::EscapeForLog(request.path));
  }
  return JsonError({util::ErrorCode::kInternal, "handler threw"}, request.request_id);
}

util::Result<WebSocketHandlers> Router::AcceptWebSocket(const RouteMatch& match, Request& request,
                                                        std::shared_ptr<WebSocketPeer> peer) const {
  if (!match.route || !match.route->websocket) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "this endpoint takes no WebSocket");
  }
  request.path_params = match.params;
  if (match.route->auth != AuthClass::kNone) {
    const bool presents_credential =
        !request.Header("authorization").empty() || !request.Header("x-api-key").empty();
    if (!presents_credential && match.route->admit_anonymous &&
        match.route->admit_anonymous(request)) {
      request.principal = Principal{};
    } else {
      auto principal = authenticator_.Authenticate(request, match.route->auth);
      if (!principal) return tl::unexpected(principal.error());
      request.principal = std::move(*principal);
    }
  }
  try {
    return match.route->websocket(request, std::move(peer));
  } catch (const std::exception& e) {
    spdlog::error("request {} {} {} failed: {}", request.request_id, request.method,
                  util::EscapeForLog(request.path), e.what());
  } catch (...) {
    spdlog::error("request {} {} {} failed with a non-standard exception", request.request_id,
                  request.method, util::EscapeForLog(request.path));
  }
  return util::Fail(util::ErrorCode::kInternal, "handler threw");
}

}  // namespace sb::http
