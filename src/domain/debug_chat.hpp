// The pipeline debug chat of the console (LangBot's "WebSocket" adapter): a person talks to a
// pipeline over a WebSocket, without any platform, to try its rules, prompt and model. The runtime
// implements it and speaks the protocol; the HTTP layer only moves frames.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace sb::domain {

// One open WebSocket as the chat sees it. Thread-safe.
class DebugChatConnection {
 public:
  virtual ~DebugChatConnection() = default;
  // A text frame from the browser. May block.
  virtual void OnText(std::string text) = 0;
  // The connection is gone; no frame is sent to it afterwards.
  virtual void OnClose() = 0;
};

// One open debug-chat socket, for the console's connection list.
struct DebugChatConnectionInfo {
  std::string connection_id;
  std::string session_type;  // "person" | "group"
  util::TimePoint created_at{};
  util::TimePoint last_active{};  // the last frame either way
};

// Open sockets over every pipeline, as LangBot's connection manager counts them.
struct DebugChatStats {
  std::size_t total_connections = 0;
  std::map<std::string, std::size_t> by_pipeline;      // pipeline uuid -> sockets
  std::map<std::string, std::size_t> by_session_type;  // "person" | "group" -> sockets
};

class DebugChat {
 public:
  virtual ~DebugChat() = default;
  // Opens a chat with `pipeline` as a person ("person") or in a group ("group"). `send` queues a
  // frame to the browser and `close` ends the connection; both are thread-safe and never block.
  // kNotFound for an unknown pipeline, kInvalidArgument for another session type. Blocking.
  virtual util::Result<std::shared_ptr<DebugChatConnection>> Connect(
      const util::PipelineId& pipeline, const std::string& session_type,
      std::function<void(std::string)> send, std::function<void()> close) = 0;
  // The messages of the pipeline's chat of that type, oldest first, as the protocol sends them.
  // kNotFound for an unknown pipeline, kInvalidArgument for another session type. Blocking.
  virtual util::Result<util::JsonArray> Messages(const util::PipelineId& pipeline,
                                                 const std::string& session_type) = 0;
  // Forgets those messages and the conversation memory behind them. Errors as Messages.
  virtual util::Result<void> Reset(const util::PipelineId& pipeline,
                                   const std::string& session_type) = 0;
  // The pipeline's open sockets, oldest first (kNotFound for an unknown pipeline), and the counts
  // over all pipelines. Blocking.
  virtual util::Result<std::vector<DebugChatConnectionInfo>> Connections(
      const util::PipelineId& pipeline) = 0;
  virtual DebugChatStats Stats() = 0;
  // Pushes `message` to every socket of the pipeline (both session types) as a
  // {"type":"broadcast","message","timestamp"} frame; the number of sockets reached. kNotFound
  // for an unknown pipeline. Not kept in the chat's history. Blocking.
  virtual util::Result<std::size_t> Broadcast(const util::PipelineId& pipeline,
                                              const util::Json& message) = 0;
};

}  // namespace sb::domain
