// KOOK's WebSocket gateway signals as the adapter sees them (developer.kookapp.cn websocket doc):
// frames {s, d, sn?}, HELLO's result code, PING, the resume URL, and REST's gateway/index answer.
// Pure functions, no I/O; kook_adapter.cpp runs the connection.
//   auto signal = DecodeSignal(text);                 // kInvalidArgument naming what is wrong
//   if (signal->s == kSignalHello) auto hello = DecodeHello(signal->d);
//   co_await conn->Write(EncodePing(order.last()));  // {"s":2,"sn":N}
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::kook {

// Signals (the `s` of a frame).
inline constexpr int kSignalEvent = 0;      // server -> client, carries `sn`
inline constexpr int kSignalHello = 1;      // server -> client, {code, session_id}
inline constexpr int kSignalPing = 2;       // client -> server, {sn}
inline constexpr int kSignalPong = 3;       // server -> client
inline constexpr int kSignalResume = 4;     // client -> server, {sn}
inline constexpr int kSignalReconnect = 5;  // server -> client, {code, err}
inline constexpr int kSignalResumeAck = 6;  // server -> client, {session_id}

struct Signal {
  int s = -1;
  util::Json d = nullptr;
  std::optional<std::int64_t> sn;  // events only
};

// kInvalidArgument for text that is no JSON object with an integer `s`, or with an `sn` that is
// neither absent, null nor a non-negative integer.
util::Result<Signal> DecodeSignal(std::string_view text);

// A server frame sent with compress=1: zlib (RFC 1950: header, deflate, Adler-32) around the JSON
// text. kInvalidArgument for bytes that are not zlib or inflate to more than `max_bytes`. The
// Adler-32 trailer is not checked (the socket is already integrity-protected).
util::Result<std::string> InflateFrame(std::string_view data, std::size_t max_bytes);

// HELLO's `d`: code 0 and a session id on success.
struct Hello {
  std::int64_t code = -1;
  std::string session_id;
};
// A `d` that is not an object, or lacks an integer code, reads as code -1.
Hello DecodeHello(const util::Json& d);

// What a non-zero HELLO code asks for. 40100 (missing parameter), 40101 (invalid token) and
// 40102 (token check failed) cannot be cured by reconnecting; 40103 (token expired) and any
// other code can: the gateway URL is fetched again.
bool HelloCodeIsFatal(std::int64_t code);
// "the token is invalid (40101)", for the bot's status; never holds the token.
std::string DescribeHelloCode(std::int64_t code);

// RECONNECT's `d`: "code 40108: invalid sn" style text for the log; empty when `d` says nothing.
std::string DescribeReconnect(const util::Json& d);

// {"s":2,"sn":N}: the last sn processed (0 when none).
std::string EncodePing(std::int64_t last_sn);
// {"s":4,"sn":N}.
std::string EncodeResume(std::int64_t last_sn);

// The gateway URL to dial: `url` as gateway/index gave it, plus `resume=1&sn=N&session_id=ID`
// when resuming (session_id non-empty). The URL carries the bot's credential in its query, so
// it is never logged; DescribeGatewayHost says where it points instead.
std::string GatewayConnectUrl(std::string_view url, std::string_view session_id,
                              std::int64_t last_sn);
// "ws://host:port" of a gateway URL, without path and query (the query holds a token).
std::string DescribeGatewayHost(std::string_view url);

// gateway/index's `data`: a ws:// or wss:// `url`; kUpstreamFailed otherwise.
util::Result<std::string> DecodeGatewayUrl(const util::Json& data);

}  // namespace sb::platforms::kook
