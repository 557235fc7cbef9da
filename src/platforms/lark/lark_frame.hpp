// Lark's long-connection frames: the `pbbp2.Frame` protobuf message of the official SDKs
// (larksuite/oapi-sdk-go ws/pbbp2.pb.go), encoded and decoded by hand for just this message
// (varints and length-delimited fields), plus the reassembly of events split over several frames.
// Pure and bounded: malformed or oversized input is an error value, never a crash.
//   auto frame = DecodeFrame(message.data);           // a binary WebSocket message
//   if (frame->Header("type") == "event") ... co_await conn->Write(EncodeFrame(
//       AckFrame(*frame, R"({"code":200})", 3)), true);
//   co_await conn->Write(EncodeFrame(PingFrame(service_id)), true);
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"

namespace sb::platforms::lark {

// Frame.method: control frames carry ping/pong, data frames carry events and their answers.
inline constexpr std::int32_t kMethodControl = 0;
inline constexpr std::int32_t kMethodData = 1;

// Bounds on what one frame may make us hold.
inline constexpr std::size_t kMaxFrameBytes = 8 * 1024 * 1024;
inline constexpr std::size_t kMaxFrameHeaders = 64;

struct FrameHeader {
  std::string key;
  std::string value;
};

// proto2 `pbbp2.Frame`: SeqID=1, LogID=2, service=3, method=4 are required; headers=5 repeated
// Header{key=1, value=2}; payload_encoding=6, payload_type=7, payload=8, LogIDNew=9 optional.
struct Frame {
  std::uint64_t seq_id = 0;
  std::uint64_t log_id = 0;
  std::int32_t service = 0;
  std::int32_t method = kMethodControl;
  std::vector<FrameHeader> headers;
  std::string payload_encoding;
  std::string payload_type;
  std::string payload;
  std::string log_id_new;

  // The first header named `key`; empty when absent.
  std::string_view Header(std::string_view key) const;
  // The header as a non-negative integer; nullopt when absent or not a small decimal.
  std::optional<int> IntHeader(std::string_view key) const;
};

// The wire bytes, field order and presence as the Go SDK writes them: the required fields and
// the optional strings always, headers in order, the payload only when not empty.
std::string EncodeFrame(const Frame& frame);

// kInvalidArgument naming what is wrong: more than kMaxFrameBytes, a truncated varint or field,
// a length past the end, a wire type the message cannot have for a known field, a group
// (wire types 3/4), a required field missing, or more than kMaxFrameHeaders headers. Unknown
// fields of the valid wire types are skipped, as protobuf does.
util::Result<Frame> DecodeFrame(std::string_view bytes);

// The client's ping: a control frame with header type=ping for the connection's service id.
Frame PingFrame(std::int32_t service_id);

// The answer to a data frame: the same frame (ids, service, headers) with header biz_rt (the
// handling time in ms) added and `payload_json` (`{"code":200}`) as its payload.
Frame AckFrame(const Frame& data_frame, std::string payload_json, std::int64_t biz_rt_ms);

// Joins the parts of an event split over frames (headers sum > 1 and seq 0..sum-1, sharing a
// message_id), as the SDKs do; parts wait at most `ttl` for the rest. Bounded in messages
// pending, parts per message and bytes. Not thread-safe: one per connection.
class FrameAssembler {
 public:
  struct Limits {
    std::size_t max_pending = 64;
    int max_parts = 64;
    std::size_t max_bytes = kMaxFrameBytes;  // per message, parts together
    util::Duration ttl{5'000};
  };
  FrameAssembler() = default;
  explicit FrameAssembler(Limits limits) : limits_(limits) {}

  // The whole payload once every part of `frame`'s message is in (at once for sum <= 1);
  // nullopt while parts are missing. kInvalidArgument for a seq outside 0..sum-1, a sum above
  // max_parts, or a message over max_bytes (its parts are then dropped).
  util::Result<std::optional<std::string>> Add(const Frame& frame, util::TimePoint now);

  std::size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    std::vector<std::optional<std::string>> parts;
    std::size_t bytes = 0;
    util::TimePoint first_seen{};
  };
  void Expire(util::TimePoint now);

  Limits limits_;
  std::map<std::string, Pending> pending_;
};

}  // namespace sb::platforms::lark
