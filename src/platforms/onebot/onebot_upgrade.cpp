#include "platforms/onebot/onebot_upgrade.hpp"

#include <cctype>
#include <optional>
#include <utility>

#include "platforms/onebot/onebot_codec.hpp"
#include "util/ascii.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::onebot {

const char* RoleName(ClientRole role) {
  switch (role) {
    case ClientRole::kApi:
      return "API";
    case ClientRole::kEvent:
      return "Event";
    case ClientRole::kUniversal:
      break;
  }
  return "Universal";
}

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

// The access_token query parameter, when present.
std::optional<std::string> QueryToken(std::string_view query) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    const std::size_t eq = item.find('=');
    if (item.substr(0, eq) == "access_token" && eq != std::string_view::npos) {
      return PercentDecode(item.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

// aiocqhttp's `(?:[Tt]oken|[Bb]earer) (\S+)`: the scheme, one space, a token without spaces.
std::optional<std::string_view> HeaderToken(std::string_view authorization) {
  for (std::string_view scheme : {"Bearer ", "bearer ", "Token ", "token "}) {
    if (!authorization.starts_with(scheme)) continue;
    std::string_view token = authorization.substr(scheme.size());
    if (token.empty()) return std::nullopt;
    for (char c : token) {
      if (std::isspace(static_cast<unsigned char>(c))) return std::nullopt;
    }
    return token;
  }
  return std::nullopt;
}

UpgradeCheck Refuse(int status, std::string body) {
  UpgradeCheck check;
  check.status = status;
  check.body = std::move(body);
  return check;
}

}  // namespace

UpgradeCheck CheckUpgrade(std::string_view target, std::string_view authorization,
                          std::string_view self_id, std::string_view role,
                          std::string_view access_token) {
  const std::size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  const std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  UpgradeCheck check;
  if (path == "/ws/api") {
    check.role = ClientRole::kApi;
  } else if (path == "/ws/event") {
    check.role = ClientRole::kEvent;
  } else if (path != "/ws") {
    return Refuse(404, "OneBot reverse WebSocket paths are /ws, /ws/api and /ws/event");
  }
  if (!access_token.empty()) {
    std::optional<std::string> offered;
    if (auto header = HeaderToken(authorization)) offered = std::string(*header);
    if (!offered) offered = QueryToken(query);
    if (!offered) return Refuse(401, "an access token is required (Authorization: Bearer <token>)");
    if (!util::ConstantTimeEquals(*offered, access_token)) {
      return Refuse(403, "the access token is wrong");
    }
  }
  if (!self_id.empty() && !IsDecimalId(self_id)) {
    return Refuse(400, "X-Self-ID must be the bot's QQ number");
  }
  check.self_id = std::string(self_id);
  if (!role.empty()) {
    if (util::EqualsIgnoreCase(role, "Universal")) {
      check.role = ClientRole::kUniversal;
    } else if (util::EqualsIgnoreCase(role, "API")) {
      check.role = ClientRole::kApi;
    } else if (util::EqualsIgnoreCase(role, "Event")) {
      check.role = ClientRole::kEvent;
    } else {
      return Refuse(400, "X-Client-Role must be Universal, API or Event");
    }
  }
  return check;
}

}  // namespace sb::platforms::onebot
