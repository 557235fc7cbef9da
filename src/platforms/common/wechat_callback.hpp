// The callback envelope WeCom (application, customer service) and WeChat Official Accounts share:
// query parameters (signature, timestamp, nonce, echostr), a flat <xml> document, and in safe mode
// its <Encrypt> field sealed with WXBizMsgCrypt (wechat_crypto.hpp). Pure and I/O-free; the
// adapters keep only what differs (receive id, the plain mode, what a message means).
//   WeChatEndpoint endpoint{.token = token, .aes_key = *WeChatAesKey(key), .receive_id = corp_id};
//   auto query = ReadWeChatQuery(call);
//   if (call.method == "GET") return WeChatEchoFromVerify(endpoint, query);  // URL verification
//   auto fields = OpenWeChatXml(endpoint, query, call.body);  // checked, decrypted, parsed
//   std::string_view text = FieldOr(*fields, "Content");
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/platform_call.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::platforms::common {

// Child element name -> its text (CDATA unwrapped) of a flat <xml> document.
using WeChatFields = std::map<std::string, std::string, std::less<>>;

// The callback's query parameters, URL-decoded; empty when absent.
struct WeChatQuery {
  std::string msg_signature;  // safe mode and WeCom: SHA-1 over token, timestamp, nonce, Encrypt
  std::string signature;      // Official Accounts' plain signature over token, timestamp, nonce
  std::string timestamp;
  std::string nonce;
  std::string echostr;       // URL verification only
  std::string encrypt_type;  // Official Accounts: "aes" in safe mode
  std::string openid;        // Official Accounts: the sender, also in the body
};

WeChatQuery ReadWeChatQuery(const domain::PlatformCall& call);

// The largest document ParseWeChatXml reads; callbacks are a few kilobytes.
inline constexpr std::size_t kMaxWeChatXmlBytes = 256 * 1024;

// Parses `<xml><Name>text</Name>...</xml>`: the root must be `xml` and its element children are
// read as text (nested elements' own text is joined; a child repeated keeps its first value).
// kInvalidArgument for malformed XML, another root, a DOCTYPE, or more than kMaxWeChatXmlBytes.
util::Result<WeChatFields> ParseWeChatXml(std::string_view xml);

// `<xml><K><![CDATA[v]]></K>...</xml>` in the given order. A value holding "]]>" is split over
// two CDATA sections, so any text round-trips through ParseWeChatXml.
std::string BuildWeChatXml(const std::vector<std::pair<std::string, std::string>>& fields);

// The value of `name`, or empty.
std::string_view FieldOr(const WeChatFields& fields, std::string_view name);

// What a callback URL is checked and sealed with.
struct WeChatEndpoint {
  std::string token;
  std::string aes_key;     // 32 bytes from WeChatAesKey; empty for plaintext mode
  std::string receive_id;  // corp id (WeCom), AppID (Official Accounts)
};

// The URL verification echo in the encrypted form (WeCom; Official Accounts in any mode echo
// `echostr` as it is after the plain signature): checks msg_signature over echostr and returns
// the decrypted plaintext. kUnauthenticated for a wrong signature or receive id.
util::Result<std::string> WeChatEchoFromVerify(const WeChatEndpoint& endpoint,
                                               const WeChatQuery& query);

// A sealed POST body: parses the outer XML, checks msg_signature over its <Encrypt>, decrypts it
// (the receive id checked) and parses the inner XML. kUnauthenticated for a wrong signature or
// receive id (nothing of the body is trusted before), kInvalidArgument for malformed input.
util::Result<WeChatFields> OpenWeChatXml(const WeChatEndpoint& endpoint, const WeChatQuery& query,
                                         std::string_view body);

// The encrypted passive-reply envelope for `inner_xml`:
// <xml><Encrypt/><MsgSignature/><TimeStamp/><Nonce/></xml>. `random16` is the format's random
// prefix (util::RandomBytes(16) in the adapters; fixed in tests).
util::Result<std::string> SealWeChatXml(const WeChatEndpoint& endpoint, std::string_view inner_xml,
                                        std::string_view timestamp, std::string_view nonce,
                                        std::string_view random16);
// The same with a fresh random prefix.
util::Result<std::string> SealWeChatXml(const WeChatEndpoint& endpoint, std::string_view inner_xml,
                                        std::string_view timestamp, std::string_view nonce);

// Whether the callback's Unix-seconds `timestamp` is within `window` of `now` either way; false
// for anything that is not a number. Platforms retry within seconds, so a stale one is a replay.
bool WeChatTimestampFresh(std::string_view timestamp, util::TimePoint now,
                          std::chrono::seconds window);

}  // namespace sb::platforms::common
