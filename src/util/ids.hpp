// Identifiers: UUID v4 text generation and checking, and distinct id types per resource so a
// BotId can never be passed where a PipelineId belongs.
//   BotId id = BotId::Generate();
//   if (auto parsed = BotId::Parse(path_text); !parsed) ...  // kInvalidArgument
#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace sb::util {

// Random (version 4) UUID in lower-case canonical form. Thread-safe.
std::string NewUuid();

// True for the canonical 8-4-4-4-12 hex form (any case).
bool IsUuid(std::string_view text);

template <typename Tag>
class TypedId {
 public:
  TypedId() = default;

  static TypedId Generate() { return TypedId(NewUuid()); }

  // Fails with kInvalidArgument naming `what` when `text` is not a UUID.
  static Result<TypedId> Parse(std::string_view text, std::string_view what = Tag::kName) {
    if (!IsUuid(text)) {
      return Fail(ErrorCode::kInvalidArgument,
                  std::string(what) + " '" + std::string(text.substr(0, 64)) + "' is not a UUID");
    }
    return TypedId(std::string(text));
  }

  // For values read back from storage, which were checked on the way in.
  static TypedId FromTrusted(std::string text) { return TypedId(std::move(text)); }

  const std::string& str() const { return value_; }
  bool empty() const { return value_.empty(); }
  auto operator<=>(const TypedId&) const = default;

 private:
  explicit TypedId(std::string value) : value_(std::move(value)) {}
  std::string value_;
};

struct ProviderIdTag {
  static constexpr const char* kName = "provider uuid";
};
struct ModelIdTag {
  static constexpr const char* kName = "model uuid";
};
struct BotIdTag {
  static constexpr const char* kName = "bot uuid";
};
struct PipelineIdTag {
  static constexpr const char* kName = "pipeline uuid";
};
struct KnowledgeBaseIdTag {
  static constexpr const char* kName = "knowledge base uuid";
};
struct KnowledgeFileIdTag {
  static constexpr const char* kName = "file id";
};

using ProviderId = TypedId<ProviderIdTag>;
using ModelId = TypedId<ModelIdTag>;
using BotId = TypedId<BotIdTag>;
using PipelineId = TypedId<PipelineIdTag>;
using KnowledgeBaseId = TypedId<KnowledgeBaseIdTag>;
using KnowledgeFileId = TypedId<KnowledgeFileIdTag>;

}  // namespace sb::util
