#include "pipeline/query.hpp"

#include <utility>

#include "pipeline/stage_settings.hpp"

namespace sb::pipeline {

const char* LauncherTypeName(LauncherType type) {
  return type == LauncherType::kGroup ? "group" : "person";
}

std::string SessionId(LauncherType type, std::string_view launcher_id) {
  std::string id = LauncherTypeName(type);
  id += '_';
  id += launcher_id;
  return id;
}

const util::JsonObject& Query::Config() const {
  static const util::JsonObject kEmpty;
  return config ? *config : kEmpty;
}

std::string PlainText(const domain::MessageChain& chain) {
  std::string text;
  for (const auto& element : chain) {
    if (element.type == domain::ElementType::kPlain) text += element.text;
  }
  return text;
}

bool IsBotMentioned(const domain::MessageChain& chain, std::string_view bot_account_id) {
  for (const auto& element : chain) {
    if (element.type == domain::ElementType::kAtAll) return true;
    if (element.type == domain::ElementType::kAt && !bot_account_id.empty() &&
        element.target == bot_account_id) {
      return true;
    }
  }
  return false;
}

bool HasNonTextElements(const domain::MessageChain& chain) {
  for (const auto& element : chain) {
    if (element.type != domain::ElementType::kPlain &&
        element.type != domain::ElementType::kSource) {
      return true;
    }
  }
  return false;
}

Query MakeQuery(std::string bot_uuid, LauncherType launcher_type, std::string launcher_id,
                std::string sender_id, domain::MessageChain chain, std::string_view bot_account_id,
                std::shared_ptr<const util::JsonObject> config,
                std::shared_ptr<const StageSettings> settings) {
  Query query;
  query.bot_uuid = std::move(bot_uuid);
  query.launcher_type = launcher_type;
  query.launcher_id = std::move(launcher_id);
  query.sender_id = std::move(sender_id);
  query.bot_account_id = std::string(bot_account_id);
  query.mentioned = IsBotMentioned(chain, bot_account_id);
  query.text = PlainText(chain);
  query.chain = std::move(chain);
  query.config = std::move(config);
  query.settings = settings
                       ? std::move(settings)
                       : std::make_shared<const StageSettings>(StageSettings::Read(query.Config()));
  return query;
}

}  // namespace sb::pipeline
