#include "domain/bot_log.hpp"
#include "domain/catalogue.hpp"
#include "domain/knowledge.hpp"
#include "domain/model.hpp"
#include "domain/task.hpp"

namespace sb::domain {

const char* ModelKindName(ModelKind kind) {
  return kind == ModelKind::kLlm ? "LLM model" : "embedding model";
}

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

const char* FileStatusName(FileStatus status) {
  switch (status) {
    case FileStatus::kPending:
      return "pending";
    case FileStatus::kProcessing:
      return "processing";
    case FileStatus::kCompleted:
      return "completed";
    case FileStatus::kFailed:
      return "failed";
  }
  return "pending";
}

const char* TaskStatusName(TaskStatus status) {
  switch (status) {
    case TaskStatus::kPending:
      return "pending";
    case TaskStatus::kRunning:
      return "running";
    case TaskStatus::kSucceeded:
      return "succeeded";
    case TaskStatus::kFailed:
      return "failed";
    case TaskStatus::kCancelled:
      return "cancelled";
  }
  return "pending";
}

const CatalogueEntry* Catalogue::Find(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const util::JsonArray& ConfigItems(const util::JsonObject& descriptor) {
  static const util::JsonArray kEmpty;
  auto spec = descriptor.find("spec");
  if (spec == descriptor.end() || !spec->value().is_object()) return kEmpty;
  auto config = spec->value().as_object().find("config");
  if (config == spec->value().as_object().end() || !config->value().is_array()) return kEmpty;
  return config->value().as_array();
}

}  // namespace sb::domain

#include "domain/bot_runtime.hpp"
#include "domain/message.hpp"

namespace sb::domain {

namespace {
constexpr const char* kElementNames[] = {"Plain", "Image", "At",   "AtAll",
                                         "Voice", "Quote", "File", "Source"};
}  // namespace

const char* ElementTypeName(ElementType type) { return kElementNames[static_cast<int>(type)]; }

bool ParseElementType(std::string_view name, ElementType& out) {
  for (int i = 0; i < static_cast<int>(std::size(kElementNames)); ++i) {
    if (name == kElementNames[i]) {
      out = static_cast<ElementType>(i);
      return true;
    }
  }
  return false;
}

const char* RuntimeStateName(RuntimeState state) {
  switch (state) {
    case RuntimeState::kStopped:
      return "stopped";
    case RuntimeState::kStarting:
      return "starting";
    case RuntimeState::kRunning:
      return "running";
    case RuntimeState::kError:
      return "error";
  }
  return "stopped";
}

}  // namespace sb::domain
