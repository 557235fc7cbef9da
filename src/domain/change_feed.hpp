// Changes other instances must hear about: with several instances on one database, each keeps
// caches (verified API keys, known accounts, provider lists, pipeline snapshots, settings) that a
// change made through another instance would leave stale. A service publishes every committed
// change here; the feed carries it to the other instances, which drop what they cached.
//   feed.Publish(ChangeKind::kApiKeys, "");          // every cached key
//   feed.Publish(ChangeKind::kUsers, "admin");       // that account's tokens
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sb::domain {

enum class ChangeKind {
  kApiKeys,    // id: empty (the key cache is dropped whole)
  kUsers,      // id: the account name (empty: every account)
  kProviders,  // providers or models; id: the provider or model uuid, or empty
  kPipelines,  // id: the pipeline uuid (empty: every pipeline)
  kBots,       // id: the bot uuid, or empty
  kSystem,     // settings such as the wizard state; id empty
  kWebhooks,   // outgoing webhooks; id empty
  // A pipeline's `ai` settings changed, so the conversation memory of its bots was cleared;
  // id: the pipeline uuid. Not part of "everything" after a reconnect (it clears stored data).
  kPipelineMemory,
};

// The wire name of a kind ("apikeys", "users", ...), and back (nullopt for an unknown name).
inline const char* ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kApiKeys:
      return "apikeys";
    case ChangeKind::kUsers:
      return "users";
    case ChangeKind::kProviders:
      return "providers";
    case ChangeKind::kPipelines:
      return "pipelines";
    case ChangeKind::kBots:
      return "bots";
    case ChangeKind::kSystem:
      return "system";
    case ChangeKind::kWebhooks:
      return "webhooks";
    case ChangeKind::kPipelineMemory:
      return "pipeline-memory";
  }
  return "unknown";
}

inline std::optional<ChangeKind> ParseChangeKind(std::string_view name) {
  for (auto kind : {ChangeKind::kApiKeys, ChangeKind::kUsers, ChangeKind::kProviders,
                    ChangeKind::kPipelines, ChangeKind::kBots, ChangeKind::kSystem,
                    ChangeKind::kWebhooks, ChangeKind::kPipelineMemory}) {
    if (name == ChangeKindName(kind)) return kind;
  }
  return std::nullopt;
}

// Thread-safe. Publish is called after the change committed and may block briefly (a database
// round trip); it never fails the caller: a change that cannot be announced is logged, and the
// other instances' caches catch up when their listener reconnects or their entries expire.
class ChangeFeed {
 public:
  virtual ~ChangeFeed() = default;
  virtual void Publish(ChangeKind kind, std::string_view id) = 0;
};

}  // namespace sb::domain
