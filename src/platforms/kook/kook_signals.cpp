#include "platforms/kook/kook_signals.hpp"

#include <fmt/format.h>

#include <boost/beast/zlib/inflate_stream.hpp>
#include <cctype>

#include "platforms/common/json_fields.hpp"
#include "platforms/common/signatures.hpp"
#include "util/utf8.hpp"

namespace sb::platforms::kook {

using util::Json;
using util::JsonObject;

util::Result<Signal> DecodeSignal(std::string_view text) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return util::Fail(util::ErrorCode::kInvalidArgument, "the frame is not JSON");
  if (!parsed->is_object()) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the frame is not a JSON object");
  }
  JsonObject& o = parsed->get_object();
  const auto s = common::IntField(o, "s");
  if (!s || *s < 0 || *s > 255) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the frame has no integer `s`");
  }
  Signal signal;
  signal.s = static_cast<int>(*s);
  if (const Json* sn = o.if_contains("sn"); sn != nullptr && !sn->is_null()) {
    const auto value = common::IntField(o, "sn");
    if (!value || *value < 0) {
      return util::Fail(util::ErrorCode::kInvalidArgument,
                        "the frame's `sn` is not a non-negative integer");
    }
    signal.sn = *value;
  }
  if (Json* d = o.if_contains("d")) signal.d = std::move(*d);
  return signal;
}

util::Result<std::string> InflateFrame(std::string_view data, std::size_t max_bytes) {
  namespace zlib = boost::beast::zlib;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(data[i]); };
  // CMF: method 8 (deflate), window <= 32 KiB; FCHECK makes CMF*256+FLG a multiple of 31; no
  // preset dictionary (FDICT).
  if (data.size() < 6 || (byte(0) & 0x0f) != 8 || (byte(0) >> 4) > 7 ||
      ((byte(0) << 8) | byte(1)) % 31 != 0 || (byte(1) & 0x20) != 0) {
    return util::Fail(util::ErrorCode::kInvalidArgument, "the binary frame is not zlib data");
  }
  zlib::inflate_stream inflater;
  zlib::z_params zs;
  zs.next_in = data.data() + 2;
  zs.avail_in = data.size() - 2;
  std::string out;
  constexpr std::size_t kChunk = 64 * 1024;
  for (;;) {
    const std::size_t produced = zs.total_out;
    out.resize(produced + kChunk);
    zs.next_out = out.data() + produced;
    zs.avail_out = kChunk;
    boost::system::error_code ec;
    inflater.write(zs, zlib::Flush::sync, ec);
    if (zs.total_out > max_bytes) {
      return util::Fail(util::ErrorCode::kInvalidArgument, "the binary frame inflates too large");
    }
    if (ec == zlib::error::end_of_stream) break;
    if (ec && ec != zlib::error::need_buffers) {
      return util::Fail(util::ErrorCode::kInvalidArgument, "the binary frame is not valid zlib");
    }
    if (zs.avail_out != 0) {  // all input taken, the stream not ended: truncated
      return util::Fail(util::ErrorCode::kInvalidArgument, "the binary frame is truncated zlib");
    }
  }
  out.resize(zs.total_out);
  return out;
}

Hello DecodeHello(const Json& d) {
  Hello hello;
  if (!d.is_object()) return hello;
  const JsonObject& o = d.get_object();
  if (auto code = common::IntField(o, "code")) hello.code = *code;
  hello.session_id = std::string(common::StringOr(o, "session_id"));
  return hello;
}

bool HelloCodeIsFatal(std::int64_t code) { return code == 40100 || code == 40101 || code == 40102; }

std::string DescribeHelloCode(std::int64_t code) {
  switch (code) {
    case 40100:
      return "the gateway says a parameter is missing (40100)";
    case 40101:
      return "the token is invalid (40101)";
    case 40102:
      return "the token failed verification (40102)";
    case 40103:
      return "the token expired (40103)";
    case -1:
      return "the HELLO carried no result code";
    default:
      return fmt::format("the gateway refused the connection (code {})", code);
  }
}

std::string DescribeReconnect(const Json& d) {
  if (!d.is_object()) return {};
  const JsonObject& o = d.get_object();
  const auto code = common::IntField(o, "code");
  std::string err(common::StringOr(o, "err"));
  if (err.size() > 200) err.resize(200);
  if (code && !err.empty()) return fmt::format("code {}: {}", *code, util::ToValidUtf8(err));
  if (code) return fmt::format("code {}", *code);
  return util::ToValidUtf8(err);
}

std::string EncodePing(std::int64_t last_sn) {
  return util::SerializeJson(JsonObject{{"s", kSignalPing}, {"sn", last_sn}});
}

std::string EncodeResume(std::int64_t last_sn) {
  return util::SerializeJson(JsonObject{{"s", kSignalResume}, {"sn", last_sn}});
}

std::string GatewayConnectUrl(std::string_view url, std::string_view session_id,
                              std::int64_t last_sn) {
  std::string out(url);
  if (session_id.empty()) return out;
  out += out.find('?') == std::string::npos ? '?' : '&';
  out += fmt::format("resume=1&sn={}&session_id={}", last_sn, common::QueryEscape(session_id));
  return out;
}

std::string DescribeGatewayHost(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return "the gateway";
  const auto end = url.find_first_of("/?#", scheme + 3);
  return std::string(url.substr(0, end));
}

util::Result<std::string> DecodeGatewayUrl(const Json& data) {
  if (data.is_object()) {
    std::string_view url = common::StringOr(data.get_object(), "url");
    if (url.starts_with("wss://") || url.starts_with("ws://")) return std::string(url);
  }
  return util::Fail(util::ErrorCode::kUpstreamFailed,
                    "KOOK's gateway/index answer has no ws:// or wss:// url");
}

}  // namespace sb::platforms::kook
