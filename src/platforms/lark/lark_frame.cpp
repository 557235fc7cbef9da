#include "platforms/lark/lark_frame.hpp"

#include <fmt/format.h>

#include <charconv>
#include <utility>

#include "platforms/common/chain_builder.hpp"

namespace sb::platforms::lark {
namespace {

using common::Invalid;

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

void PutVarint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutTag(std::string& out, std::uint32_t field, WireType type) {
  PutVarint(out, (static_cast<std::uint64_t>(field) << 3) | type);
}

void PutBytes(std::string& out, std::uint32_t field, std::string_view bytes) {
  PutTag(out, field, kBytes);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

// A cursor over protobuf bytes that refuses to read past the end.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return pos_ >= bytes_.size(); }

  bool Varint(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) return false;
      const auto b = static_cast<unsigned char>(bytes_[pos_++]);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;  // more than 10 bytes
  }

  bool Bytes(std::string_view& out) {
    std::uint64_t n = 0;
    if (!Varint(n) || n > bytes_.size() - pos_) return false;
    out = bytes_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return true;
  }

  bool Skip(std::size_t n) {
    if (n > bytes_.size() - pos_) return false;
    pos_ += n;
    return true;
  }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

// Skips a field of an unknown number; false for groups and truncation.
bool SkipField(Reader& r, std::uint32_t type) {
  std::uint64_t v = 0;
  std::string_view bytes;
  switch (type) {
    case kVarint:
      return r.Varint(v);
    case kFixed64:
      return r.Skip(8);
    case kBytes:
      return r.Bytes(bytes);
    case kFixed32:
      return r.Skip(4);
    default:
      return false;
  }
}

util::Result<FrameHeader> DecodeHeader(std::string_view bytes) {
  Reader r(bytes);
  FrameHeader header;
  bool has_key = false;
  bool has_value = false;
  while (!r.done()) {
    std::uint64_t tag = 0;
    if (!r.Varint(tag)) return Invalid("frame header: truncated tag");
    const auto field = static_cast<std::uint32_t>(tag >> 3);
    const auto type = static_cast<std::uint32_t>(tag & 7);
    if (field == 1 || field == 2) {
      std::string_view text;
      if (type != kBytes || !r.Bytes(text)) return Invalid("frame header: bad key or value");
      (field == 1 ? header.key : header.value).assign(text);
      (field == 1 ? has_key : has_value) = true;
    } else if (!SkipField(r, type)) {
      return Invalid(fmt::format("frame header: bad field {}", field));
    }
  }
  if (!has_key || !has_value) return Invalid("frame header: key or value missing");
  return header;
}

}  // namespace

std::string_view Frame::Header(std::string_view key) const {
  for (const auto& header : headers) {
    if (header.key == key) return header.value;
  }
  return {};
}

std::optional<int> Frame::IntHeader(std::string_view key) const {
  const std::string_view text = Header(key);
  int value = 0;
  if (text.empty() || text.size() > 9) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::string EncodeFrame(const Frame& frame) {
  std::string out;
  out.reserve(64 + frame.payload.size());
  PutTag(out, 1, kVarint);
  PutVarint(out, frame.seq_id);
  PutTag(out, 2, kVarint);
  PutVarint(out, frame.log_id);
  // int32 is sign-extended to 64 bits on the wire, as protobuf does.
  PutTag(out, 3, kVarint);
  PutVarint(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(frame.service)));
  PutTag(out, 4, kVarint);
  PutVarint(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(frame.method)));
  for (const auto& header : frame.headers) {
    std::string inner;
    PutBytes(inner, 1, header.key);
    PutBytes(inner, 2, header.value);
    PutBytes(out, 5, inner);
  }
  PutBytes(out, 6, frame.payload_encoding);
  PutBytes(out, 7, frame.payload_type);
  if (!frame.payload.empty()) PutBytes(out, 8, frame.payload);
  PutBytes(out, 9, frame.log_id_new);
  return out;
}

util::Result<Frame> DecodeFrame(std::string_view bytes) {
  if (bytes.size() > kMaxFrameBytes) {
    return Invalid(
        fmt::format("frame of {} bytes is over the {} byte limit", bytes.size(), kMaxFrameBytes));
  }
  Reader r(bytes);
  Frame frame;
  unsigned required = 0;  // bit n-1 for field n of 1..4
  while (!r.done()) {
    std::uint64_t tag = 0;
    if (!r.Varint(tag)) return Invalid("frame: truncated tag");
    const auto field = static_cast<std::uint32_t>(tag >> 3);
    const auto type = static_cast<std::uint32_t>(tag & 7);
    if (field == 0) return Invalid("frame: field number 0");
    if (field >= 1 && field <= 4) {
      std::uint64_t v = 0;
      if (type != kVarint) return Invalid(fmt::format("frame: field {} is not a varint", field));
      if (!r.Varint(v)) return Invalid(fmt::format("frame: truncated field {}", field));
      required |= 1u << (field - 1);
      if (field == 1) frame.seq_id = v;
      if (field == 2) frame.log_id = v;
      if (field == 3) frame.service = static_cast<std::int32_t>(v);
      if (field == 4) frame.method = static_cast<std::int32_t>(v);
      continue;
    }
    if (field >= 5 && field <= 9) {
      std::string_view value;
      if (type != kBytes) return Invalid(fmt::format("frame: field {} is not bytes", field));
      if (!r.Bytes(value)) return Invalid(fmt::format("frame: field {} runs past the end", field));
      switch (field) {
        case 5: {
          if (frame.headers.size() >= kMaxFrameHeaders) {
            return Invalid(fmt::format("frame: more than {} headers", kMaxFrameHeaders));
          }
          auto header = DecodeHeader(value);
          if (!header) return tl::unexpected(header.error());
          frame.headers.push_back(std::move(*header));
          break;
        }
        case 6:
          frame.payload_encoding.assign(value);
          break;
        case 7:
          frame.payload_type.assign(value);
          break;
        case 8:
          frame.payload.assign(value);
          break;
        default:
          frame.log_id_new.assign(value);
          break;
      }
      continue;
    }
    if (!SkipField(r, type)) return Invalid(fmt::format("frame: bad field {}", field));
  }
  if (required != 0xf)
    return Invalid("frame: a required field (SeqID, LogID, service, method) is missing");
  return frame;
}

Frame PingFrame(std::int32_t service_id) {
  Frame frame;
  frame.service = service_id;
  frame.method = kMethodControl;
  frame.headers.push_back({"type", "ping"});
  return frame;
}

Frame AckFrame(const Frame& data_frame, std::string payload_json, std::int64_t biz_rt_ms) {
  Frame ack = data_frame;
  ack.headers.push_back({"biz_rt", std::to_string(biz_rt_ms)});
  ack.payload = std::move(payload_json);
  return ack;
}

void FrameAssembler::Expire(util::TimePoint now) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now - it->second.first_seen > limits_.ttl) {
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

util::Result<std::optional<std::string>> FrameAssembler::Add(const Frame& frame,
                                                             util::TimePoint now) {
  const int sum = frame.IntHeader("sum").value_or(1);
  if (sum <= 1) return std::optional<std::string>(frame.payload);
  if (sum > limits_.max_parts) {
    return Invalid(fmt::format("an event in {} parts (at most {})", sum, limits_.max_parts));
  }
  const auto seq = frame.IntHeader("seq");
  if (!seq || *seq >= sum) return Invalid("an event part with a seq outside 0..sum-1");
  const std::string id(frame.Header("message_id"));
  Expire(now);
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    if (pending_.size() >= limits_.max_pending) {
      // The oldest unfinished message gives way: it is the likeliest to be abandoned.
      auto oldest = pending_.begin();
      for (auto p = pending_.begin(); p != pending_.end(); ++p) {
        if (p->second.first_seen < oldest->second.first_seen) oldest = p;
      }
      pending_.erase(oldest);
    }
    Pending fresh;
    fresh.parts.resize(static_cast<std::size_t>(sum));
    fresh.first_seen = now;
    it = pending_.emplace(id, std::move(fresh)).first;
  }
  Pending& p = it->second;
  if (p.parts.size() != static_cast<std::size_t>(sum)) {
    pending_.erase(it);
    return Invalid("event parts disagree on their sum");
  }
  auto& slot = p.parts[static_cast<std::size_t>(*seq)];
  if (slot) p.bytes -= slot->size();  // a repeated part replaces the earlier copy
  p.bytes += frame.payload.size();
  if (p.bytes > limits_.max_bytes) {
    pending_.erase(it);
    return Invalid(fmt::format("an event over {} bytes", limits_.max_bytes));
  }
  slot = frame.payload;
  std::string whole;
  whole.reserve(p.bytes);
  for (const auto& part : p.parts) {
    if (!part) return std::optional<std::string>();
    whole += *part;
  }
  pending_.erase(it);
  return std::optional<std::string>(std::move(whole));
}

}  // namespace sb::platforms::lark
