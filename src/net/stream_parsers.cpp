// SSE (WHATWG "event stream interpretation") and newline-delimited splitting over arbitrary pieces.
#include "net/stream_parsers.hpp"

namespace sb::net {

bool SseParser::Feed(std::string_view piece, const std::function<void(const SseEvent&)>& on_event) {
  std::size_t pos = 0;
  while (pos < piece.size()) {
    // A CR ending the previous piece and an LF starting this one are a single CRLF line end.
    if (last_was_cr_) {
      last_was_cr_ = false;
      if (piece[pos] == '\n') {
        ++pos;
        continue;
      }
    }
    const std::size_t end = piece.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) {
      buffer_.append(piece.substr(pos));
      break;
    }
    if (buffer_.empty()) {
      Line(piece.substr(pos, end - pos), on_event);
    } else {
      buffer_.append(piece.substr(pos, end - pos));
      std::string line = std::move(buffer_);
      buffer_.clear();
      Line(line, on_event);
    }
    if (piece[end] == '\r') {
      if (end + 1 < piece.size()) {
        pos = end + (piece[end + 1] == '\n' ? 2 : 1);
      } else {
        last_was_cr_ = true;
        pos = end + 1;
      }
    } else {
      pos = end + 1;
    }
  }
  // Both the partial line and the accumulated data count: either can grow without bound when a
  // server never sends a line end or a blank line.
  return buffer_.size() + pending_.data.size() <= max_event_bytes;
}

void SseParser::Finish(const std::function<void(const SseEvent&)>& on_event) {
  if (!buffer_.empty()) {
    std::string line = std::move(buffer_);
    buffer_.clear();
    Line(line, on_event);
  }
  last_was_cr_ = false;
  Line({}, on_event);
}

void SseParser::Line(std::string_view line, const std::function<void(const SseEvent&)>& on_event) {
  if (line.empty()) {
    if (has_data_ || !pending_.event.empty()) {
      on_event(pending_);
    }
    // The last event id persists across events (WHATWG), the rest starts over.
    pending_.event.clear();
    pending_.data.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // comment, e.g. OpenRouter's keep-alive
  std::string_view field = line;
  std::string_view value;
  if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) pending_.data.push_back('\n');
    pending_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    pending_.event.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) pending_.id.assign(value);
  }
  // "retry" and unknown fields are ignored: reconnection is the caller's business.
}

bool LineSplitter::Feed(std::string_view piece,
                        const std::function<void(std::string_view)>& on_line) {
  std::size_t pos = 0;
  while (pos < piece.size()) {
    const std::size_t end = piece.find('\n', pos);
    if (end == std::string_view::npos) {
      buffer_.append(piece.substr(pos));
      break;
    }
    std::string_view line = piece.substr(pos, end - pos);
    std::string joined;
    if (!buffer_.empty()) {
      joined = std::move(buffer_);
      buffer_.clear();
      joined.append(line);
      line = joined;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max_line_bytes) return false;
    if (!line.empty()) on_line(line);
    pos = end + 1;
  }
  return buffer_.size() <= max_line_bytes;
}

void LineSplitter::Finish(const std::function<void(std::string_view)>& on_line) {
  std::string line = std::move(buffer_);
  buffer_.clear();
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (!line.empty()) on_line(line);
}

}  // namespace sb::net
