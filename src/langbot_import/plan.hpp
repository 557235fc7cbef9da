// What an import will do, decided before anything is written: for every LangBot record, create
// it, leave it (already here, unchanged), report a conflict (here with the same identity but
// other content; kept unless overwriting), overwrite it, or skip it with the reason. Building a
// plan reads Switchboard's storage and checks every record with the services' own rules; it
// writes nothing.
//   auto plan = BuildPlan(inputs);
//   auto applied = ApplyPlan(*plan, writers);   // apply.hpp
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "domain/account.hpp"
#include "domain/catalogue.hpp"
#include "domain/storage.hpp"
#include "langbot_import/config_mapping.hpp"
#include "langbot_import/snapshot.hpp"
#include "services/auth_service.hpp"
#include "services/model_service.hpp"
#include "services/provider_service.hpp"
#include "services/webhook_service.hpp"

namespace sb::langbot_import {

enum class Kind {
  kAccount,
  kProvider,
  kLlmModel,
  kEmbeddingModel,
  kPipeline,
  kBot,
  kApiKey,
  kMcpServer,
  kWebhook,
  kPlugin,
  kKnowledgeBase,
  kConfig,
};
const char* KindTitle(Kind kind);  // "providers", "LLM models", ...

enum class Outcome { kCreate, kUnchanged, kConflict, kOverwrite, kSkip };

struct ApiKeyImport {
  std::string key;  // the key itself (LangBot's column); only its hash is stored here
  domain::ApiKey record;
};

using Payload = std::variant<std::monostate, domain::User, domain::Provider, domain::Model,
                             domain::Pipeline, domain::Bot, ApiKeyImport, domain::McpServer,
                             domain::Webhook, domain::InstalledPlugin, ConfigSetting>;

struct Item {
  Kind kind = Kind::kProvider;
  std::string id;    // uuid, "author/name", masked key, config key
  std::string name;  // for people
  Outcome outcome = Outcome::kSkip;
  std::string reason;              // skip and conflict: why
  std::vector<std::string> notes;  // what a person should know about a taken record
  Payload payload;                 // create / overwrite: what to write
  Payload previous;                // overwrite: what is there now (to put back on failure)
};

struct Plan {
  std::vector<Item> items;  // in writing order
  std::vector<RowProblem> problems;
  bool refused = false;  // rows could not be read and skip_invalid was not given
  bool writes_config = false;
};

struct PlanInputs {
  const Snapshot* snapshot = nullptr;
  const ConfigMapping* config = nullptr;  // null when LangBot's config.yaml was not found
  domain::Storage* storage = nullptr;
  services::ProviderService* providers = nullptr;
  services::ModelService* models = nullptr;
  const domain::Catalogue* adapters = nullptr;
  const util::Clock* clock = nullptr;
  bool overwrite = false;     // replace records that exist with other content
  bool skip_invalid = false;  // import the rest when some rows cannot be read
};

// Errors are the storage's (reading what exists); everything about the LangBot records is in
// the plan.
util::Result<Plan> BuildPlan(const PlanInputs& in);

}  // namespace sb::langbot_import
