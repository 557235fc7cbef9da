// The public face of an adapter whose work all lives in a shared Core: the Core outlives the
// adapter while its coroutines and callbacks hold it, so the adapter only forwards each call and,
// when destroyed, tells the Core that nobody will wait for its Stop any more (Core::Abandon).
//   std::unique_ptr<PlatformAdapter> MakeLineAdapter(AdapterContext context) {
//     return std::make_unique<common::CoreAdapter<Core,
//     line::CheckDeliverable>>(std::move(context));
//   }
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "platforms/adapter_context.hpp"
#include "platforms/platform_adapter.hpp"

namespace sb::platforms::common {

// `Core` is built from the AdapterContext and has Start(), Stop(stopped), Abandon() and
// Send(message, reply_to_message_id, done) with PlatformAdapter's contracts; a Core that has
// HandleWebhook(call, answer) takes webhook calls, any other answers them 404 as
// PlatformAdapter does; likewise AcceptSocket(call, socket) for WebSocket upgrades.
// `kCheckDeliverable` is the codec's pure check.
template <class Core, util::Result<void> (*kCheckDeliverable)(const domain::OutgoingMessage&)>
class CoreAdapter final : public PlatformAdapter {
 public:
  // `extra` goes to Core's constructor after the context (state an adapter keeps across its
  // incarnations, handed in by the factory).
  template <class... Extra>
  explicit CoreAdapter(AdapterContext context, Extra&&... extra)
      : core_(std::make_shared<Core>(std::move(context), std::forward<Extra>(extra)...)) {}
  ~CoreAdapter() override { core_->Abandon(); }
  CoreAdapter(const CoreAdapter&) = delete;
  CoreAdapter& operator=(const CoreAdapter&) = delete;

  void Start() override { core_->Start(); }
  void Stop(std::function<void()> stopped) override { core_->Stop(std::move(stopped)); }

  util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) const override {
    return kCheckDeliverable(message);
  }

  void Send(domain::OutgoingMessage message, std::string reply_to_message_id,
            std::function<void(util::Result<domain::SendReceipt>)> done) override {
    core_->Send(std::move(message), std::move(reply_to_message_id), std::move(done));
  }

  // A Core that has BeginStream(chat_type, chat_id, reply_to) streams replies; any other does not.
  std::shared_ptr<ReplyStream> BeginStream(domain::TargetType chat_type, std::string chat_id,
                                           std::string reply_to_message_id) override {
    if constexpr (requires(Core & core) {
                    core.BeginStream(chat_type, std::move(chat_id), std::move(reply_to_message_id));
                  }) {
      return core_->BeginStream(chat_type, std::move(chat_id), std::move(reply_to_message_id));
    } else {
      return PlatformAdapter::BeginStream(chat_type, std::move(chat_id),
                                          std::move(reply_to_message_id));
    }
  }

  void HandleWebhook(WebhookCall call, std::function<void(WebhookAnswer)> answer) override {
    if constexpr (requires(Core & core) {
                    core.HandleWebhook(std::move(call), std::move(answer));
                  }) {
      core_->HandleWebhook(std::move(call), std::move(answer));
    } else {
      PlatformAdapter::HandleWebhook(std::move(call), std::move(answer));
    }
  }

  util::Result<domain::PlatformSocketHandlers> AcceptSocket(
      WebhookCall call, std::shared_ptr<domain::PlatformSocket> socket) override {
    if constexpr (requires(Core & core) {
                    core.AcceptSocket(std::move(call), std::move(socket));
                  }) {
      return core_->AcceptSocket(std::move(call), std::move(socket));
    } else {
      return PlatformAdapter::AcceptSocket(std::move(call), std::move(socket));
    }
  }

 private:
  const std::shared_ptr<Core> core_;
};

}  // namespace sb::platforms::common
