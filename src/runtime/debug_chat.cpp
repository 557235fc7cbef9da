#include "runtime/debug_chat.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/steady_timer.hpp>
#include <utility>

#include "pipeline/query.hpp"
#include "platforms/webhook/webhook_codec.hpp"

namespace sb::runtime {

namespace asio = boost::asio;
using util::ErrorCode;
using util::JsonArray;
using util::JsonObject;

namespace {

std::string TextOf(const domain::MessageChain& chain) {
  std::string out;
  for (const auto& e : chain) {
    if (e.type == domain::ElementType::kPlain) out += e.text;
  }
  return out;
}

JsonArray EncodeChain(const domain::MessageChain& chain) {
  JsonArray out;
  for (const auto& e : chain) {
    if (e.type != domain::ElementType::kSource) {
      out.push_back(platforms::webhook::EncodeMessageElement(e));
    }
  }
  return out;
}

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
             std::string session_type, std::uint64_t id, std::function<void(std::string)> send,
             std::function<void()> close)
      : chat_(std::move(chat)),
        pipeline_(std::move(pipeline)),
        session_type_(std::move(session_type)),
        id_(id),
        send_(std::move(send)),
        close_(std::move(close)) {}

  void OnText(std::string text) override {
    auto chat = chat_.lock();
    if (!chat) return;
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

  void Send(const JsonObject& event) {
    if (!closed_) send_(Serialize(event));
  }
  void SendRaw(const std::string& frame) {
    if (!closed_) send_(frame);
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
  const std::uint64_t id_;
  std::function<void(std::string)> send_;
  std::function<void()> close_;
  std::atomic<bool> closed_{false};
};

// One message on its way through the pipeline.
struct DebugChatRuntime::Turn {
  std::string room;
  std::string session_type;
  std::int64_t reply_id = 0;
  std::string streamed;  // text so far, when streaming
  util::TimePoint started{};
  std::mutex mu;
  SessionScheduler::Finished finished;  // ends the room's turn
};

DebugChatRuntime::DebugChatRuntime(pipeline::PipelineEngine& engine,
                                   domain::PipelineRepository& pipelines,
                                   domain::ConversationRepository& memory,
                                   util::BlockingExecutor& blocking, asio::any_io_executor executor,
                                   const util::Clock& clock)
    : engine_(engine),
      pipelines_(pipelines),
      memory_(memory),
      blocking_(blocking),
      executor_(std::move(executor)),
      clock_(clock),
      scheduler_(std::make_unique<SessionScheduler>(
          kMaxRunning, kMaxWaiting,
          [&blocking](std::function<void()> job) { blocking.Post(std::move(job)); })) {}

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
                                     std::move(send), std::move(close));
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

void DebugChatRuntime::Broadcast(const std::string& room, const JsonObject& event) {
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
  auto chain = platforms::webhook::DecodeMessageChain(frame, "message");
  if (!chain) return from->Send(Error(chain.error().message));
  bool stream = true;
  if (const auto* s = frame.if_contains("stream"); s && s->is_bool()) stream = s->get_bool();
  auto pipeline = pipelines_.Get(from->pipeline());
  if (!pipeline) return from->Send(Error("cannot read the pipeline: " + pipeline.error().message));

  const std::string room = from->Room();
  const std::string& session_type = from->session_type();
  const auto now = clock_.Now();
  const std::int64_t user_id = NextId(room);
  JsonObject user_message{{"id", user_id},
                          {"role", "user"},
                          {"content", TextOf(*chain)},
                          {"message_chain", EncodeChain(*chain)},
                          {"timestamp", util::FormatRfc3339(now)},
                          {"is_final", true},
                          {"connection_id", std::to_string(from->id())}};
  Record(room, user_message);
  Broadcast(
      room,
      JsonObject{{"type", "user_message"}, {"session_type", session_type}, {"data", user_message}});

  domain::MessageElement source;
  source.type = domain::ElementType::kSource;
  source.id = std::to_string(user_id);
  chain->insert(chain->begin(), std::move(source));
  const auto launcher =
      session_type == "group" ? pipeline::LauncherType::kGroup : pipeline::LauncherType::kPerson;
  auto query = pipeline::MakeQuery(kBotId, launcher, kBotId, "websocket_user", std::move(*chain),
                                   kBotAccountId,
                                   std::make_shared<const JsonObject>(std::move(pipeline->config)));

  auto turn = std::make_shared<Turn>();
  turn->room = room;
  turn->session_type = session_type;
  turn->reply_id = NextId(room);
  turn->started = now;
  std::weak_ptr<DebugChatRuntime> weak = weak_from_this();
  pipeline::PipelineEngine::OnDelta on_delta;
  if (stream) {
    on_delta = [weak, turn](const domain::ChatDelta& delta) {
      auto self = weak.lock();
      if (!self || delta.content.empty()) return;
      std::string text;
      {
        std::lock_guard lock(turn->mu);
        turn->streamed += delta.content;
        text = turn->streamed;
      }
      JsonObject piece{{"id", turn->reply_id},
                       {"role", "assistant"},
                       {"content", text},
                       {"message_chain", JsonArray{JsonObject{{"type", "Plain"}, {"text", text}}}},
                       {"timestamp", util::FormatRfc3339(turn->started)},
                       {"is_final", false}};
      self->Broadcast(turn->room, JsonObject{{"type", "response"},
                                             {"session_type", turn->session_type},
                                             {"data", std::move(piece)}});
    };
  }
  // One message of a room at a time (replies in order, memory not raced), few rooms at once.
  const util::PipelineId pipeline_id = pipeline->uuid;
  auto shared_query = std::make_shared<pipeline::Query>(std::move(query));
  const bool taken = scheduler_->Submit(
      room, [weak, turn, pipeline_id, shared_query,
             on_delta = std::move(on_delta)](SessionScheduler::Finished finished) mutable {
        turn->finished = std::move(finished);
        auto self = weak.lock();
        if (!self) return;
        self->engine_.Process(
            pipeline_id, std::move(*shared_query),
            [weak, turn](pipeline::EngineOutcome outcome) {
              if (auto self = weak.lock()) self->OnOutcome(turn, std::move(outcome));
            },
            std::move(on_delta));
      });
  if (!taken) from->Send(Error("too many messages are waiting; try again in a moment"));
}

void DebugChatRuntime::OnOutcome(std::shared_ptr<Turn> turn, pipeline::EngineOutcome outcome) {
  std::weak_ptr<DebugChatRuntime> weak = weak_from_this();
  if (outcome.kind == pipeline::OutcomeKind::kDeferred) {
    // Held by the rate limiter ("wait"): resume when its window opens, holding the room's turn
    // but not a slot of the global limit.
    scheduler_->Yield(turn->room);
    auto timer = std::make_shared<asio::steady_timer>(
        executor_, std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       outcome.wait_until - clock_.Now()));
    timer->async_wait(
        [weak, turn, timer, deferred = outcome.deferred](const boost::system::error_code& ec) {
          auto self = weak.lock();
          if (ec || !self) return;
          self->blocking_.Post([weak, turn, deferred] {
            auto self = weak.lock();
            if (!self) return;
            self->engine_.Resume(deferred, [weak, turn](pipeline::EngineOutcome resumed) {
              if (auto self = weak.lock()) self->OnOutcome(turn, std::move(resumed));
            });
          });
        });
    return;
  }
  if (outcome.reply.empty()) {
    // Ignored by a rule: say so, as the console has no event log to show it.
    std::string why = pipeline::IgnoreReasonName(outcome.reason);
    for (const auto& line : outcome.log) why = line.text;
    Broadcast(turn->room, JsonObject{{"type", "ignored"},
                                     {"session_type", turn->session_type},
                                     {"reason", pipeline::IgnoreReasonName(outcome.reason)},
                                     {"message", why}});
    if (turn->finished) turn->finished();
    return;
  }
  JsonObject reply{{"id", turn->reply_id},
                   {"role", "assistant"},
                   {"content", TextOf(outcome.reply)},
                   {"message_chain", EncodeChain(outcome.reply)},
                   {"timestamp", util::FormatRfc3339(turn->started)},
                   {"is_final", true}};
  Record(turn->room, reply);
  Broadcast(turn->room, JsonObject{{"type", "response"},
                                   {"session_type", turn->session_type},
                                   {"data", std::move(reply)}});
  if (turn->finished) turn->finished();
}

}  // namespace sb::runtime
