// The judgement on a OneBot implementation's reverse-WebSocket upgrade request, before the
// adapter accepts it: the path, the access token, X-Self-ID and X-Client-Role (ws-reverse.md, as
// LangBot's aiocqhttp serves them). Pure, no I/O; onebot_adapter.cpp owns the listener.
//   UpgradeCheck check = CheckUpgrade("/ws/api", "Bearer t", "10001", "", "t");
//   if (check.status != 0) return Refuse(check.status, check.body);  // body never holds a token
#pragma once

#include <string>
#include <string_view>

namespace sb::platforms::onebot {

// What a reverse-WebSocket client offers to do, from X-Client-Role (ws-reverse.md).
enum class ClientRole { kUniversal, kApi, kEvent };

// "Universal", "API" or "Event", for logs.
const char* RoleName(ClientRole role);

// The decision on one upgrade request, before it is accepted.
struct UpgradeCheck {
  int status = 0;       // 0 accepts; else 400, 401, 403 or 404 with `body`
  std::string body;     // why, for the implementation's log; never holds a token
  std::string self_id;  // X-Self-ID; empty when the header is absent
  ClientRole role = ClientRole::kUniversal;
};

// Paths /ws, /ws/api and /ws/event (trailing '/' optional, any query) as LangBot's aiocqhttp
// serves them, else 404. With `access_token` configured, the token comes from `Authorization:
// Bearer <t>` (or `Token <t>`, as aiocqhttp takes it) or the `access_token` query parameter:
// none -> 401, a different one -> 403 (compared in constant time). An X-Self-ID that is not a
// number, or an X-Client-Role other than Universal / API / Event, -> 400. A missing role is taken
// from the path (/ws/api: API, /ws/event: Event, else Universal) rather than refused.
UpgradeCheck CheckUpgrade(std::string_view target, std::string_view authorization,
                          std::string_view self_id, std::string_view role,
                          std::string_view access_token);

}  // namespace sb::platforms::onebot
