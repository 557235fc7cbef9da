// Incremental parsers for streamed response bodies: Server-Sent Events (WHATWG rules: LF, CRLF or
// CR line ends, multi-line data joined with "\n", comments ignored) and newline-delimited JSON.
// Bytes arrive in arbitrary pieces; events come out as soon as they are complete.
//   SseParser sse;
//   sse.Feed(piece, [](const SseEvent& e) { ... e.event, e.data ... });
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace sb::net {

struct SseEvent {
  std::string event;  // empty when the event had no "event:" line
  std::string data;
  std::string id;
};

class SseParser {
 public:
  // Calls `on_event` for every event completed by `piece`. Returns false (and stops) when the
  // buffered partial event would exceed `max_event_bytes`.
  bool Feed(std::string_view piece, const std::function<void(const SseEvent&)>& on_event);
  // At end of stream: an event still pending (no blank line after it) is dispatched too.
  void Finish(const std::function<void(const SseEvent&)>& on_event);

  std::size_t max_event_bytes = 4 * 1024 * 1024;

 private:
  void Line(std::string_view line, const std::function<void(const SseEvent&)>& on_event);

  std::string buffer_;  // bytes of an incomplete line
  bool last_was_cr_ = false;
  SseEvent pending_;
  bool has_data_ = false;
};

class LineSplitter {
 public:
  // Calls `on_line` for every complete non-empty line (without its line end). Returns false when
  // a line would exceed `max_line_bytes`.
  bool Feed(std::string_view piece, const std::function<void(std::string_view)>& on_line);
  // At end of stream: a last line without a line end is delivered too.
  void Finish(const std::function<void(std::string_view)>& on_line);

  std::size_t max_line_bytes = 4 * 1024 * 1024;

 private:
  std::string buffer_;
};

}  // namespace sb::net
