#include "storage/postgres/pg_change_feed.hpp"

#include <spdlog/spdlog.h>

#include <utility>

#include "storage/postgres/pg_listener.hpp"

namespace sb::storage::postgres {

std::string FormatChange(std::string_view instance, domain::ChangeKind kind, std::string_view id) {
  std::string out;
  out.append(instance).append("|").append(domain::ChangeKindName(kind)).append("|");
  if (out.size() + id.size() <= kMaxChangePayload) out.append(id);
  return out;
}

util::Result<ChangeMessage> ParseChange(std::string_view payload) {
  auto bad = [](const char* why) {
    return util::Fail(util::ErrorCode::kInvalidArgument, std::string("change notification ") + why);
  };
  if (payload.size() > kMaxChangePayload) return bad("too long");
  const auto first = payload.find('|');
  if (first == std::string_view::npos || first == 0) return bad("without an instance");
  const auto second = payload.find('|', first + 1);
  if (second == std::string_view::npos) return bad("without a kind");
  // The id is the rest, '|' and all: ids are ours, but a name may hold anything.
  const auto kind = domain::ParseChangeKind(payload.substr(first + 1, second - first - 1));
  if (!kind) return bad("of an unknown kind");
  return ChangeMessage{std::string(payload.substr(0, first)), *kind,
                       std::string(payload.substr(second + 1))};
}

void PgChangeFeed::Publish(domain::ChangeKind kind, std::string_view id) {
  const std::string payload = FormatChange(instance_id_, kind, id);
  auto sent = db_.Write([&](sql::Connection& c) { return Notify(c, kChangeChannel, payload); });
  if (!sent) {
    // The change itself is committed; other instances see it when their caches next miss or
    // their listener reconnects.
    spdlog::warn("cannot announce a change of {} to other instances: {}",
                 domain::ChangeKindName(kind), sent.error().message);
  }
}

util::Result<std::unique_ptr<PgChangeListener>> PgChangeListener::Start(const std::string& url,
                                                                        std::string instance_id,
                                                                        ChangeHandlers handlers) {
  PgListenerOptions options;
  options.application_name = "switchboard-changes";
  options.on_notify = [instance = std::move(instance_id), on_change = handlers.on_change](
                          const std::string&, const std::string& payload) {
    auto change = ParseChange(payload);
    if (!change) {
      spdlog::debug("ignored: {}", change.error().message);
      return;
    }
    if (change->instance == instance || !on_change) return;  // our own, already applied
    on_change(change->kind, change->id);
  };
  options.on_reconnect = std::move(handlers.on_missed);
  auto listener = PgListener::Start(url, {kChangeChannel}, std::move(options));
  if (!listener) return tl::make_unexpected(listener.error());
  std::unique_ptr<PgChangeListener> out(new PgChangeListener());
  out->listener_ = std::move(*listener);
  return out;
}

PgChangeListener::~PgChangeListener() { Stop(); }

bool PgChangeListener::WaitUntilListening(std::chrono::milliseconds limit) {
  return listener_->WaitUntilListening(limit);
}

void PgChangeListener::Stop() {
  if (listener_) listener_->Stop();
}

}  // namespace sb::storage::postgres
