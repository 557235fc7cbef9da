#include "platforms/wecom/wecom_callback.hpp"

#include <utility>

namespace sb::platforms::wecom {
namespace {

using util::ErrorCode;

domain::PlatformAnswer Text(int status, std::string body) {
  return {status, "text/plain; charset=utf-8", std::move(body)};
}

OpenedCallback Refuse(int status, std::string body, std::string log = {}) {
  OpenedCallback out;
  out.answer = Text(status, std::move(body));
  out.log = std::move(log);
  return out;
}

}  // namespace

domain::PlatformAnswer Acknowledged() { return Text(200, ""); }

OpenedCallback OpenCallback(const common::WeChatEndpoint& endpoint,
                            const domain::PlatformCall& call, util::TimePoint now) {
  if (call.method != "GET" && call.method != "POST") return Refuse(405, "use GET or POST");
  const common::WeChatQuery query = common::ReadWeChatQuery(call);
  if (call.method == "GET") {
    // The console's "save callback URL": answer the decrypted echostr, and nothing else.
    auto echo = common::WeChatEchoFromVerify(endpoint, query);
    if (!echo) {
      return Refuse(echo.error().code == ErrorCode::kUnauthenticated ? 401 : 400,
                    "URL verification failed",
                    "refused a WeCom URL verification: " + echo.error().message);
    }
    OpenedCallback out;
    out.answer = Text(200, std::move(*echo));
    return out;
  }
  if (call.body.size() > kMaxCallbackBytes) return Refuse(413, "the body is too large");
  // A stale timestamp is refused before any crypto: a replayed capture costs nothing.
  if (!common::WeChatTimestampFresh(query.timestamp, now, kTimestampWindow)) {
    return Refuse(401, "stale or missing timestamp",
                  "refused a WeCom callback whose timestamp is missing or too old");
  }
  auto fields = common::OpenWeChatXml(endpoint, query, call.body);
  if (!fields) {
    if (fields.error().code == ErrorCode::kUnauthenticated) {
      return Refuse(401, "signature or receive id check failed",
                    "refused a WeCom callback: " + fields.error().message);
    }
    return Refuse(400, "malformed callback",
                  "refused a malformed WeCom callback: " + fields.error().message);
  }
  OpenedCallback out;
  out.fields = std::move(*fields);
  return out;
}

}  // namespace sb::platforms::wecom
