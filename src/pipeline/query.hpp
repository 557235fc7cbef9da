// The per-message context every pipeline decision reads: who sent what to which bot, and the
// pipeline config in force. Built once by the runtime when a message arrives.
//   Query q = MakeQuery(bot_uuid, LauncherType::kGroup, "42", "7", chain, "bot_account", cfg);
//   if (q.mentioned) ...   // q.text is the Plain text the rules look at
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "domain/message.hpp"
#include "util/json.hpp"

namespace sb::pipeline {

struct StageSettings;

enum class LauncherType { kPerson, kGroup };

// "person" / "group", as in LangBot's session ids and event log.
const char* LauncherTypeName(LauncherType type);

// LangBot's session id form: "person_<id>" or "group_<id>".
std::string SessionId(LauncherType type, std::string_view launcher_id);
// The launcher type of a chat of the message model (a group, else a person).
inline LauncherType LauncherOf(domain::TargetType type) {
  return type == domain::TargetType::kGroup ? LauncherType::kGroup : LauncherType::kPerson;
}

struct Query {
  std::string bot_uuid;
  std::string bot_account_id;  // the bot's own id on the platform; empty until known
  LauncherType launcher_type = LauncherType::kPerson;
  std::string launcher_id;  // the chat: a person's id or a group's id
  std::string sender_id;    // the person who wrote; equals launcher_id in private chats
  domain::MessageChain chain;
  // At of the bot's own account id, or AtAll.
  bool mentioned = false;
  // The Plain elements joined; what trigger, ignore and filter rules look at.
  std::string text;
  // Shared with the running pipeline so a query does not copy the config; null means defaults.
  std::shared_ptr<const util::JsonObject> config;
  // The stages' settings, read from `config` once per pipeline change (PipelineSnapshot).
  std::shared_ptr<const StageSettings> settings;

  // The pipeline config, or an empty object (every reader then falls back to its default).
  const util::JsonObject& Config() const;
  const StageSettings& Settings() const { return *settings; }
  std::string SessionId() const { return pipeline::SessionId(launcher_type, launcher_id); }
};

// Concatenation of the chain's Plain elements.
std::string PlainText(const domain::MessageChain& chain);

// True when the chain holds an At whose target is `bot_account_id` (non-empty), or an AtAll.
bool IsBotMentioned(const domain::MessageChain& chain, std::string_view bot_account_id);

// True when the chain holds anything other than Plain and Source; LangBot skips content checks
// for such messages because its filters only understand text.
bool HasNonTextElements(const domain::MessageChain& chain);

// `settings` are those read from `config`; when null they are read here (tests, one-off runs).
Query MakeQuery(std::string bot_uuid, LauncherType launcher_type, std::string launcher_id,
                std::string sender_id, domain::MessageChain chain, std::string_view bot_account_id,
                std::shared_ptr<const util::JsonObject> config,
                std::shared_ptr<const StageSettings> settings = nullptr);

}  // namespace sb::pipeline
