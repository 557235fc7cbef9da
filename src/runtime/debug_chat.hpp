// The console's pipeline debug chat over WebSocket, with LangBot's protocol:
//   browser -> {"type":"message","message":[elements],"stream":true} | {"type":"ping"} |
//              {"type":"disconnect"}
//   server  -> {"type":"connected",...}, {"type":"user_message","session_type","data":{...}},
//              {"type":"response","session_type","data":{id, role:"assistant", content,
//               message_chain, timestamp, is_final}} (streamed pieces share the id; the last has
//              is_final true), {"type":"pong"}, {"type":"error","message"}
// Each pipeline has one person chat and one group chat; every connection to it sees the same
// messages. Memory lives in the process only (no bot owns these sessions).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "domain/conversation.hpp"
#include "domain/debug_chat.hpp"
#include "domain/pipeline.hpp"
#include "pipeline/message_driver.hpp"
#include "pipeline/pipeline_snapshot.hpp"
#include "util/clock.hpp"

namespace sb::runtime {

class DebugChatRuntime final : public domain::DebugChat,
                               public std::enable_shared_from_this<DebugChatRuntime> {
 public:
  // The id the debug sessions use in place of a bot, and the bot's own account id (what an At
  // must name for the group "at" rule to fire).
  static constexpr const char* kBotId = "websocket";
  static constexpr const char* kBotAccountId = "websocketbot";
  static constexpr std::size_t kMaxHistory = 200;
  // What the debug chat's driver should allow: turns in flight over all rooms, and waiting.
  static constexpr pipeline::DriverOptions kDriverOptions{.max_in_flight = 8, .max_queued = 200};

  // The driver's engine must remember through `memory` (an in-process store). A message goes
  // the same way as a bot's: aggregation, rate limits and forced delays apply.
  DebugChatRuntime(std::shared_ptr<pipeline::MessageDriver> driver,
                   domain::PipelineRepository& pipelines, pipeline::PipelineCache& cache,
                   domain::ConversationRepository& memory, const util::Clock& clock);

  util::Result<std::shared_ptr<domain::DebugChatConnection>> Connect(
      const util::PipelineId& pipeline, const std::string& session_type,
      std::function<void(std::string)> send, std::function<void()> close) override;
  util::Result<util::JsonArray> Messages(const util::PipelineId& pipeline,
                                         const std::string& session_type) override;
  util::Result<void> Reset(const util::PipelineId& pipeline,
                           const std::string& session_type) override;
  util::Result<std::vector<domain::DebugChatConnectionInfo>> Connections(
      const util::PipelineId& pipeline) override;
  domain::DebugChatStats Stats() override;
  util::Result<std::size_t> Broadcast(const util::PipelineId& pipeline,
                                      const util::Json& message) override;

 private:
  class Connection;
  class RoomOrigin;
  class RoomTurn;
  struct Room {
    std::vector<util::JsonObject> history;
    std::int64_t next_id = 1;
    std::map<std::uint64_t, std::weak_ptr<Connection>> connections;
  };
  static std::string RoomKey(const util::PipelineId& pipeline, const std::string& session_type);
  void SendToRoom(const std::string& room, const util::JsonObject& event);
  // The pipeline's open sockets of both session types.
  std::vector<std::shared_ptr<Connection>> Open(const util::PipelineId& pipeline);
  // Stores (or, for a streamed reply, replaces) a message of the room's history.
  void Record(const std::string& room, const util::JsonObject& message);
  std::int64_t NextId(const std::string& room);
  void Leave(const std::string& room, std::uint64_t connection);
  void OnMessage(const std::shared_ptr<Connection>& from, const util::JsonObject& frame);

  std::shared_ptr<pipeline::MessageDriver> driver_;
  domain::PipelineRepository& pipelines_;
  pipeline::PipelineCache& cache_;
  domain::ConversationRepository& memory_;
  const util::Clock& clock_;
  std::mutex mu_;
  std::map<std::string, Room> rooms_;  // guarded by mu_
  std::uint64_t next_connection_ = 1;  // guarded by mu_
};

}  // namespace sb::runtime
