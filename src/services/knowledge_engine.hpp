// The built-in knowledge engine as LangBot's console sees an engine plugin: its id, name,
// capabilities and the creation and retrieval forms (LangBot's dynamic-form items, with the field
// names of LangBot's LangRAG engine, so its console's forms work unchanged), and the typed
// settings read from a base's JSON with the forms' defaults.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "knowledge/retrieval_scoring.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::services {

inline constexpr const char* kBuiltinEngineId = "switchboard/builtin";
inline constexpr const char* kBuiltinParserId = "switchboard/builtin-parser";
// Bases created for LangBot's own engine (imported, or by scripts written for LangBot) are run
// by the built-in engine.
inline constexpr const char* kLangRagEngineId = "langbot-team/LangRAG";

// The engine id a request names, mapped to ours; nullopt for an engine we do not have.
std::optional<std::string> CanonicalEngineId(std::string_view id);

enum class IndexType { kChunk, kParentChild };

struct CreationSettings {
  std::string embedding_model_uuid;
  IndexType index_type = IndexType::kChunk;
  std::size_t chunk_size = 512;
  std::size_t overlap = 50;
  std::size_t parent_chunk_size = 2048;
  std::size_t child_chunk_size = 256;
};

struct RetrievalSettings {
  std::size_t top_k = 5;
  knowledge::SearchType search_type = knowledge::SearchType::kHybrid;
  double vector_weight = 0.7;
  double score_threshold = 0.2;
};

// kInvalidArgument naming the field for a missing model, an unknown index type or a size out of
// range (chunk sizes 50..8192, overlap below the chunk size).
util::Result<CreationSettings> ReadCreationSettings(const util::JsonObject& settings);
// The stored settings with `overrides` on top (LangBot's merge); kInvalidArgument naming the
// field when a value is out of range (top_k 1..50, vector_weight and score_threshold 0..1).
util::Result<RetrievalSettings> ReadRetrievalSettings(const util::JsonObject& stored,
                                                      const util::JsonObject& overrides);

// The `/knowledge/engines` entry, with both schemas.
util::JsonObject BuiltinEngineJson();
// Its name alone ({"en_US", "zh_Hans"}), for each base's `knowledge_engine`.
util::JsonObject BuiltinEngineName();
util::JsonArray CreationSchema();
util::JsonArray RetrievalSchema();
// The `/knowledge/parsers` entry.
util::JsonObject BuiltinParserJson();

}  // namespace sb::services
