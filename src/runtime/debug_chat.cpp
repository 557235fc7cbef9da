#include "runtime/debug_chat.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

#include "domain/message_json.hpp"
#include "domain/message_text.hpp"
#include "pipeline/query.hpp"

namespace sb::runtime {

using util::ErrorCode;
using util::JsonArray;
using util::JsonObject;

namespace {

std::string Serialize(const JsonObject& object) { return util::SerializeJson(object); }

JsonObject Error(std::string message) {
  return JsonObject{{"type", "error"}, {"message", std::move(message)}};
}

util::Result<pipeline::LauncherType> ParseSessionType(const std::string& type) {
  if (type == "person") return pipeline::LauncherType::kPerson;
  if (type == "group") return pipeline::LauncherType::kGroup;
  return util::Fail(ErrorCode::kInvalidArgument, "session_type must be person or group");
}

}  // namespace

// One WebSocket. Frames arrive one at a time (the HTTP layer guarantees it).
class DebugChatRuntime::Connection final : public domain::DebugChatConnection,
                                           public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::weak_ptr<DebugChatRuntime> chat, util::PipelineId pipeline,
             std::string session_type, std::uint64_t id, util::TimePoint now,
             std::function<void(std::string)> send, std::function<void()> close)
      : chat_(std::move(chat)),
        pipeline_(std::move(pipeline)),
        session_type_(std::move(session_type)),
        id_(id),
        created_at_(now),
        last_active_(now.time_since_epoch().count()),
        send_(std::move(send)),
        close_(std::move(close)) {}

  void OnText(std::string text) override {
    auto chat = chat_.lock();
    if (!chat) return;
    Touch(Now(*chat));
    auto parsed = util::ParseJson(text);
    if (!parsed || !parsed->is_object()) return Send(Error("Invalid JSON format"));
    const JsonObject& frame = parsed->get_object();
    std::string type = "message";
    if (const auto* t = frame.if_contains("type"); t && t->is_string()) type = t->get_string();
    if (type == "ping") {
      return Send(JsonObject{{"type", "pong"}, {"timestamp", util::FormatRfc3339(Now(*chat))}});
    }
    if (type == "disconnect") return close_();
    if (type != "message") return Send(Error("unknown message type: " + type));
    chat->OnMessage(shared_from_this(), frame);
  }

  void OnClose() override {
    closed_ = true;
    if (auto chat = chat_.lock()) chat->Leave(Room(), id_);
  }

  void Send(const JsonObject& event) { SendRaw(Serialize(event)); }
  void SendRaw(const std::string& frame) {
    if (closed_) return;
    if (auto chat = chat_.lock()) Touch(Now(*chat));
    send_(frame);
  }

  domain::DebugChatConnectionInfo Info() const {
    return {std::to_string(id_), session_type_, created_at_,
            util::TimePoint(util::TimePoint::duration(last_active_.load()))};
  }

  const util::PipelineId& pipeline() const { return pipeline_; }
  const std::string& session_type() const { return session_type_; }
  std::uint64_t id() const { return id_; }
  std::string Room() const { return RoomKey(pipeline_, session_type_); }

 private:
  static util::TimePoint Now(const DebugChatRuntime& chat) { return chat.clock_.Now(); }

  std::weak_ptr<DebugChatRuntime> chat_;
  const util::PipelineId pipeline_;
  const std::string session_type_;
  void Touch(util::TimePoint now) { last_active_ = now.time_since_epoch().count(); }

  const std::uint64_t id_;
  const util::TimePoint created_at_;
  std::atomic<util::TimePoint::rep> last_active_;  // frames come and go on different threads
  std::function<void(std::string)> send_;
  std::function<void()> close_;
  std::atomic<bool> closed_{false};
};

// A room as the message driver sees it.
class DebugChatRuntime::RoomOrigin final : public pipeline::MessageOrigin {
 public:
  // `stream`: the sender wants the reply's pieces as they are written.
  RoomOrigin(std::weak_ptr<DebugChatRuntime> chat, util::PipelineId pipeline,
             std::string session_type, bool stream)
      : chat_(std::move(chat)),
        pipeline_(std::move(pipeline)),
        session_type_(std::move(session_type)),
        stream_(stream) {}

  std::string scope() const override { return RoomKey(pipeline_, session_type_); }
  std::string bot_id() const override { return kBotId; }
  std::string account_id() const override { return kBotAccountId; }
  std::shared_ptr<const pipeline::PipelineSnapshot> CachedPipeline() override {
    auto chat = chat_.lock();
    return chat ? chat->cache_.Cached(pipeline_) : nullptr;
  }
  util::Result<std::shared_ptr<const pipeline::PipelineSnapshot>> LoadPipeline() override {
    auto chat = chat_.lock();
    if (!chat) return util::Fail(ErrorCode::kUnavailable, "shutting down");
    return chat->cache_.Load(pipeline_);
  }
  void Refused(const domain::ReceivedMessage&, const std::string&, bool busy) override {
    if (auto chat = chat_.lock()) {
      chat->SendToRoom(scope(), Error(busy ? "too many messages are waiting; try again in a moment"
                                           : "the debug chat is closing"));
    }
  }
  std::shared_ptr<pipeline::Turn> Begin(const domain::ReceivedMessage&,
                                        const std::string&) override;

 private:
  std::weak_ptr<DebugChatRuntime> chat_;
  const util::PipelineId pipeline_;
  const std::string session_type_;
  const bool stream_;
};

// One message's run: streams the reply's pieces and records the reply in the room.
class DebugChatRuntime::RoomTurn final : public pipeline::Turn,
                                         public std::enable_shared_from_this<RoomTurn> {
 public:
  RoomTurn(std::weak_ptr<DebugChatRuntime> chat, std::string room, std::string session_type,
           std::int64_t reply_id, util::TimePoint started, bool stream)
      : chat_(std::move(chat)),
        room_(std::move(room)),
        session_type_(std::move(session_type)),
        reply_id_(reply_id),
        started_(started),
        stream_(stream) {}

  void Log(domain::LogLevel, std::string) override {}  // the console has no event log
  bool Answering() override { return !chat_.expired(); }

  pipeline::PipelineEngine::OnDelta Stream() override {
    if (!stream_) return nullptr;
    return [self = shared_from_this()](const domain::ChatDelta& delta) {
      auto chat = self->chat_.lock();
      if (!chat || delta.content.empty()) return;
      std::string text;
      {
        std::lock_guard lock(self->mu_);
        self->streamed_ += delta.content;
        text = self->streamed_;
      }
      JsonObject piece{{"id", self->reply_id_},
                       {"role", "assistant"},
                       {"content", text},
                       {"message_chain", JsonArray{JsonObject{{"type", "Plain"}, {"text", text}}}},
                       {"timestamp", util::FormatRfc3339(self->started_)},
                       {"is_final", false}};
      chat->SendToRoom(self->room_, JsonObject{{"type", "response"},
                                               {"session_type", self->session_type_},
                                               {"data", std::move(piece)}});
    };
  }

  void Ignored(const pipeline::EngineOutcome& outcome) override {
    auto chat = chat_.lock();
    if (!chat) return;
    // Say why, as the console has no event log to show it.
    std::string why = pipeline::IgnoreReasonName(outcome.reason);
    for (const auto& line : outcome.log) why = line.text;
    chat->SendToRoom(room_, JsonObject{{"type", "ignored"},
                                       {"session_type", session_type_},
                                       {"reason", pipeline::IgnoreReasonName(outcome.reason)},
                                       {"message", why}});
  }

  // The console shows a reply whole: a forward message has nothing to merge there.
  void Deliver(domain::MessageChain reply, std::string, domain::ReplyForm,
               std::function<void()> done) override {
    if (auto chat = chat_.lock()) {
      JsonObject message{{"id", reply_id_},
                         {"role", "assistant"},
                         {"content", domain::PlainTextOf(reply)},
                         {"message_chain", domain::EncodeMessageChain(reply)},
                         {"timestamp", util::FormatRfc3339(started_)},
                         {"is_final", true}};
      chat->Record(room_, message);
      chat->SendToRoom(room_, JsonObject{{"type", "response"},
                                         {"session_type", session_type_},
                                         {"data", std::move(message)}});
    }
    done();
  }

 private:
  std::weak_ptr<DebugChatRuntime> chat_;
  const std::string room_;
  const std::string session_type_;
  const std::int64_t reply_id_;
  const util::TimePoint started_;
  const bool stream_;
  std::mutex mu_;
  std::string streamed_;  // text so far, when streaming; guarded by mu_
};

std::shared_ptr<pipeline::Turn> DebugChatRuntime::RoomOrigin::Begin(const domain::ReceivedMessage&,
                                                                    const std::string&) {
  auto chat = chat_.lock();
  if (!chat) return nullptr;
  const std::string room = scope();
  return std::make_shared<RoomTurn>(chat_, room, session_type_, chat->NextId(room),
                                    chat->clock_.Now(), stream_);
}

DebugChatRuntime::DebugChatRuntime(std::shared_ptr<pipeline::MessageDriver> driver,
                                   domain::PipelineRepository& pipelines,
                                   pipeline::PipelineCache& cache,
                                   domain::ConversationRepository& memory, const util::Clock& clock)
    : driver_(std::move(driver)),
      pipelines_(pipelines),
      cache_(cache),
      memory_(memory),
      clock_(clock) {}

std::string DebugChatRuntime::RoomKey(const util::PipelineId& pipeline,
                                      const std::string& session_type) {
  return pipeline.str() + "/" + session_type;
}

util::Result<std::shared_ptr<domain::DebugChatConnection>> DebugChatRuntime::Connect(
    const util::PipelineId& pipeline, const std::string& session_type,
    std::function<void(std::string)> send, std::function<void()> close) {
  if (auto type = ParseSessionType(session_type); !type) return tl::unexpected(type.error());
  auto exists = pipelines_.Get(pipeline);
  if (!exists) return tl::unexpected(exists.error());
  std::shared_ptr<Connection> connection;
  {
    std::lock_guard lock(mu_);
    connection =
        std::make_shared<Connection>(weak_from_this(), pipeline, session_type, next_connection_++,
                                     clock_.Now(), std::move(send), std::move(close));
    rooms_[connection->Room()].connections[connection->id()] = connection;
  }
  connection->Send(JsonObject{{"type", "connected"},
                              {"connection_id", std::to_string(connection->id())},
                              {"pipeline_uuid", pipeline.str()},
                              {"session_type", session_type},
                              {"timestamp", util::FormatRfc3339(clock_.Now())}});
  return connection;
}

util::Result<JsonArray> DebugChatRuntime::Messages(const util::PipelineId& pipeline,
                                                   const std::string& session_type) {
  if (auto type = ParseSessionType(session_type); !type) return tl::unexpected(type.error());
  // An unknown pipeline has no chat: 404, as Connect answers, not an empty list.
  if (auto exists = pipelines_.Get(pipeline); !exists) return tl::unexpected(exists.error());
  JsonArray out;
  std::lock_guard lock(mu_);
  auto it = rooms_.find(RoomKey(pipeline, session_type));
  if (it == rooms_.end()) return out;
  for (const auto& m : it->second.history) out.push_back(m);
  return out;
}

util::Result<void> DebugChatRuntime::Reset(const util::PipelineId& pipeline,
                                           const std::string& session_type) {
  auto type = ParseSessionType(session_type);
  if (!type) return tl::unexpected(type.error());
  if (auto exists = pipelines_.Get(pipeline); !exists) return tl::unexpected(exists.error());
  {
    std::lock_guard lock(mu_);
    auto it = rooms_.find(RoomKey(pipeline, session_type));
    if (it != rooms_.end()) it->second.history.clear();
  }
  domain::ConversationKey key{pipeline, util::BotId::FromTrusted(kBotId),
                              pipeline::SessionId(*type, kBotId)};
  return memory_.Clear(key);
}

util::Result<std::vector<domain::DebugChatConnectionInfo>> DebugChatRuntime::Connections(
    const util::PipelineId& pipeline) {
  if (auto exists = pipelines_.Get(pipeline); !exists) return tl::unexpected(exists.error());
  std::vector<domain::DebugChatConnectionInfo> out;
  for (const auto& c : Open(pipeline)) out.push_back(c->Info());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::stoull(a.connection_id) < std::stoull(b.connection_id);
  });
  return out;
}

domain::DebugChatStats DebugChatRuntime::Stats() {
  domain::DebugChatStats stats;
  std::lock_guard lock(mu_);
  for (const auto& [key, room] : rooms_) {
    for (const auto& [id, weak] : room.connections) {
      auto c = weak.lock();
      if (!c) continue;
      ++stats.total_connections;
      ++stats.by_pipeline[c->pipeline().str()];
      ++stats.by_session_type[c->session_type()];
    }
  }
  return stats;
}

util::Result<std::size_t> DebugChatRuntime::Broadcast(const util::PipelineId& pipeline,
                                                      const util::Json& message) {
  if (auto exists = pipelines_.Get(pipeline); !exists) return tl::unexpected(exists.error());
  const std::string frame = Serialize(JsonObject{{"type", "broadcast"},
                                                 {"message", message},
                                                 {"timestamp", util::FormatRfc3339(clock_.Now())}});
  auto targets = Open(pipeline);
  for (auto& c : targets) c->SendRaw(frame);
  return targets.size();
}

std::vector<std::shared_ptr<DebugChatRuntime::Connection>> DebugChatRuntime::Open(
    const util::PipelineId& pipeline) {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard lock(mu_);
  for (const char* type : {"person", "group"}) {
    auto it = rooms_.find(RoomKey(pipeline, type));
    if (it == rooms_.end()) continue;
    for (auto& [id, weak] : it->second.connections) {
      if (auto c = weak.lock()) out.push_back(std::move(c));
    }
  }
  return out;
}

void DebugChatRuntime::SendToRoom(const std::string& room, const JsonObject& event) {
  std::vector<std::shared_ptr<Connection>> targets;
  {
    std::lock_guard lock(mu_);
    auto it = rooms_.find(room);
    if (it == rooms_.end()) return;
    for (auto& [id, weak] : it->second.connections) {
      if (auto c = weak.lock()) targets.push_back(std::move(c));
    }
  }
  const std::string frame = Serialize(event);
  for (auto& c : targets) c->SendRaw(frame);
}

void DebugChatRuntime::Record(const std::string& room, const JsonObject& message) {
  std::lock_guard lock(mu_);
  auto& history = rooms_[room].history;
  const auto* id = message.if_contains("id");
  for (auto& m : history) {
    if (id && m.if_contains("id") && *m.if_contains("id") == *id) {
      m = message;
      return;
    }
  }
  history.push_back(message);
  if (history.size() > kMaxHistory) history.erase(history.begin());
}

std::int64_t DebugChatRuntime::NextId(const std::string& room) {
  std::lock_guard lock(mu_);
  return rooms_[room].next_id++;
}

void DebugChatRuntime::Leave(const std::string& room, std::uint64_t connection) {
  std::lock_guard lock(mu_);
  auto it = rooms_.find(room);
  if (it == rooms_.end()) return;
  it->second.connections.erase(connection);
  if (it->second.connections.empty() && it->second.history.empty()) rooms_.erase(it);
}

void DebugChatRuntime::OnMessage(const std::shared_ptr<Connection>& from, const JsonObject& frame) {
  auto chain = domain::DecodeMessageChain(frame, "message");
  if (!chain) return from->Send(Error(chain.error().message));
  bool stream = true;
  if (const auto* s = frame.if_contains("stream"); s && s->is_bool()) stream = s->get_bool();
  if (auto pipeline = cache_.Load(from->pipeline()); !pipeline) {
    return from->Send(Error("cannot read the pipeline: " + pipeline.error().message));
  }

  const std::string room = from->Room();
  const std::string& session_type = from->session_type();
  const std::int64_t user_id = NextId(room);
  JsonObject user_message{{"id", user_id},
                          {"role", "user"},
                          {"content", domain::PlainTextOf(*chain)},
                          {"message_chain", domain::EncodeMessageChain(*chain)},
                          {"timestamp", util::FormatRfc3339(clock_.Now())},
                          {"is_final", true},
                          {"connection_id", std::to_string(from->id())}};
  Record(room, user_message);
  SendToRoom(
      room,
      JsonObject{{"type", "user_message"}, {"session_type", session_type}, {"data", user_message}});

  domain::ReceivedMessage message;
  message.chat_type =
      session_type == "group" ? domain::TargetType::kGroup : domain::TargetType::kPerson;
  message.chat_id = kBotId;
  message.sender_id = "websocket_user";
  message.message_id = std::to_string(user_id);
  domain::MessageElement source;
  source.type = domain::ElementType::kSource;
  source.id = std::to_string(user_id);
  message.chain = std::move(*chain);
  message.chain.insert(message.chain.begin(), std::move(source));
  // One message of a room at a time (replies in order, memory not raced), few rooms at once.
  driver_->Submit(
      std::make_shared<RoomOrigin>(weak_from_this(), from->pipeline(), session_type, stream),
      std::move(message));
}

}  // namespace sb::runtime
