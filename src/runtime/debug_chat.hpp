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

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "domain/conversation.hpp"
#include "domain/debug_chat.hpp"
#include "domain/pipeline.hpp"
#include "pipeline/engine.hpp"
#include "runtime/session_scheduler.hpp"
#include "util/blocking_executor.hpp"
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
  static constexpr std::size_t kMaxRunning = 8;    // debug turns in flight over all rooms
  static constexpr std::size_t kMaxWaiting = 200;  // beyond that a message is refused

  // `engine` must remember through `memory` (an in-process store).
  DebugChatRuntime(pipeline::PipelineEngine& engine, domain::PipelineRepository& pipelines,
                   domain::ConversationRepository& memory, util::BlockingExecutor& blocking,
                   boost::asio::any_io_executor executor, const util::Clock& clock);

  util::Result<std::shared_ptr<domain::DebugChatConnection>> Connect(
      const util::PipelineId& pipeline, const std::string& session_type,
      std::function<void(std::string)> send, std::function<void()> close) override;
  util::Result<util::JsonArray> Messages(const util::PipelineId& pipeline,
                                         const std::string& session_type) override;
  util::Result<void> Reset(const util::PipelineId& pipeline,
                           const std::string& session_type) override;

 private:
  class Connection;
  struct Room {
    std::vector<util::JsonObject> history;
    std::int64_t next_id = 1;
    std::map<std::uint64_t, std::weak_ptr<Connection>> connections;
  };
  struct Turn;

  static std::string RoomKey(const util::PipelineId& pipeline, const std::string& session_type);
  void Broadcast(const std::string& room, const util::JsonObject& event);
  // Stores (or, for a streamed reply, replaces) a message of the room's history.
  void Record(const std::string& room, const util::JsonObject& message);
  std::int64_t NextId(const std::string& room);
  void Leave(const std::string& room, std::uint64_t connection);
  void OnMessage(const std::shared_ptr<Connection>& from, const util::JsonObject& frame);
  void OnOutcome(std::shared_ptr<Turn> turn, pipeline::EngineOutcome outcome);

  pipeline::PipelineEngine& engine_;
  domain::PipelineRepository& pipelines_;
  domain::ConversationRepository& memory_;
  util::BlockingExecutor& blocking_;
  boost::asio::any_io_executor executor_;
  const util::Clock& clock_;
  std::mutex mu_;
  std::map<std::string, Room> rooms_;
  std::uint64_t next_connection_ = 1;
  std::unique_ptr<SessionScheduler> scheduler_;
};

}  // namespace sb::runtime
