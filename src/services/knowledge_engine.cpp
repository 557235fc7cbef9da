#include "services/knowledge_engine.hpp"

#include <fmt/format.h>

#include <cmath>

#include "knowledge/document_text.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;
using util::JsonArray;
using util::JsonObject;

JsonObject I18n(std::string_view en, std::string_view zh) {
  return JsonObject{{"en_US", en}, {"zh_Hans", zh}};
}

JsonObject Field(std::string_view name, std::string_view type, JsonObject label,
                 JsonObject description, util::Json default_value, bool required) {
  return JsonObject{{"name", name},
                    {"id", name},
                    {"type", type},
                    {"label", std::move(label)},
                    {"description", std::move(description)},
                    {"default", std::move(default_value)},
                    {"required", required}};
}

JsonObject Option(std::string_view name, JsonObject label) {
  return JsonObject{{"name", name}, {"label", std::move(label)}};
}

// A whole number from JSON (an integer, or a float or numeric string from a form).
std::optional<std::int64_t> IntegerOf(const util::Json& v) {
  if (v.is_int64()) return v.as_int64();
  if (v.is_uint64())
    return static_cast<std::int64_t>(std::min<std::uint64_t>(v.as_uint64(), 1u << 30));
  if (v.is_double() && std::isfinite(v.as_double()) && std::floor(v.as_double()) == v.as_double())
    return static_cast<std::int64_t>(v.as_double());
  if (v.is_string()) {
    try {
      std::size_t used = 0;
      const std::string s(v.as_string());
      const long long n = std::stoll(s, &used);
      if (used == s.size()) return n;
    } catch (...) {
    }
  }
  return std::nullopt;
}

std::optional<double> NumberOf(const util::Json& v) {
  if (v.is_double()) return v.as_double();
  if (v.is_int64()) return static_cast<double>(v.as_int64());
  if (v.is_uint64()) return static_cast<double>(v.as_uint64());
  if (v.is_string()) {
    try {
      std::size_t used = 0;
      const std::string s(v.as_string());
      const double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (...) {
    }
  }
  return std::nullopt;
}

util::Result<void> ReadSize(const JsonObject& o, std::string_view key, std::int64_t min,
                            std::int64_t max, std::size_t& out) {
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return util::Ok();
  auto n = IntegerOf(*v);
  if (!n || *n < min || *n > max) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("{} must be a whole number from {} to {}", key, min, max));
  }
  out = static_cast<std::size_t>(*n);
  return util::Ok();
}

util::Result<void> ReadFraction(const JsonObject& o, std::string_view key, double& out) {
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return util::Ok();
  auto d = NumberOf(*v);
  if (!d || !std::isfinite(*d) || *d < 0 || *d > 1) {
    return util::Fail(ErrorCode::kInvalidArgument, fmt::format("{} must be from 0 to 1", key));
  }
  out = *d;
  return util::Ok();
}

}  // namespace

std::optional<std::string> CanonicalEngineId(std::string_view id) {
  if (id == kBuiltinEngineId || id == kLangRagEngineId) return std::string(kBuiltinEngineId);
  return std::nullopt;
}

util::Result<CreationSettings> ReadCreationSettings(const JsonObject& o) {
  CreationSettings s;
  const auto* model = o.if_contains("embedding_model_uuid");
  if (!model || !model->is_string() || model->as_string().empty()) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "creation_settings.embedding_model_uuid is required: choose an embedding "
                      "model");
  }
  s.embedding_model_uuid = std::string(model->as_string());
  if (const auto* t = o.if_contains("index_type"); t && !t->is_null()) {
    if (t->is_string() && t->as_string() == "chunk") {
      s.index_type = IndexType::kChunk;
    } else if (t->is_string() && t->as_string() == "parent_child") {
      s.index_type = IndexType::kParentChild;
    } else {
      return util::Fail(ErrorCode::kInvalidArgument,
                        "index_type must be \"chunk\" or \"parent_child\"");
    }
  }
  if (auto r = ReadSize(o, "chunk_size", 50, 8192, s.chunk_size); !r)
    return tl::unexpected(r.error());
  if (auto r = ReadSize(o, "overlap", 0, 4096, s.overlap); !r) return tl::unexpected(r.error());
  if (auto r = ReadSize(o, "parent_chunk_size", 100, 32768, s.parent_chunk_size); !r)
    return tl::unexpected(r.error());
  if (auto r = ReadSize(o, "child_chunk_size", 50, 8192, s.child_chunk_size); !r)
    return tl::unexpected(r.error());
  const std::size_t searched =
      s.index_type == IndexType::kChunk ? s.chunk_size : s.child_chunk_size;
  if (s.overlap >= searched) {
    return util::Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("overlap ({}) must be smaller than the chunk size ({})", s.overlap, searched));
  }
  if (s.index_type == IndexType::kParentChild && s.child_chunk_size >= s.parent_chunk_size) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "child_chunk_size must be smaller than parent_chunk_size");
  }
  return s;
}

util::Result<RetrievalSettings> ReadRetrievalSettings(const JsonObject& stored,
                                                      const JsonObject& overrides) {
  JsonObject merged = stored;
  for (const auto& kv : overrides) merged[kv.key()] = kv.value();
  RetrievalSettings s;
  if (auto r = ReadSize(merged, "top_k", 1, 50, s.top_k); !r) return tl::unexpected(r.error());
  if (const auto* t = merged.if_contains("search_type"); t && !t->is_null()) {
    auto type = t->is_string() ? knowledge::SearchTypeFrom(t->as_string()) : std::nullopt;
    if (!type) {
      return util::Fail(ErrorCode::kInvalidArgument,
                        "search_type must be \"vector\", \"full_text\" or \"hybrid\"");
    }
    s.search_type = *type;
  }
  if (auto r = ReadFraction(merged, "vector_weight", s.vector_weight); !r)
    return tl::unexpected(r.error());
  if (auto r = ReadFraction(merged, "score_threshold", s.score_threshold); !r)
    return tl::unexpected(r.error());
  return s;
}

JsonArray CreationSchema() {
  JsonArray fields;
  fields.push_back(
      Field("embedding_model_uuid", "embedding-model-selector", I18n("Embedding model", "嵌入模型"),
            I18n("The model that turns passages and questions into vectors. It "
                 "cannot be changed while the base has files unless they are "
                 "re-embedded.",
                 "将文本和问题转换为向量的模型。知识库有文件时不能直接更换，除非重新嵌入。"),
            "", true));
  auto index_type =
      Field("index_type", "select", I18n("Index type", "索引类型"),
            I18n("chunk: passages are searched and returned. parent_child: small "
                 "passages are searched, their larger parent is returned.",
                 "chunk：检索并返回片段。parent_child：检索小片段，返回其所在的大段落。"),
            "chunk", true);
  index_type["options"] = JsonArray{Option("chunk", I18n("Chunk", "分块")),
                                    Option("parent_child", I18n("Parent-child", "父子分块"))};
  fields.push_back(std::move(index_type));
  auto show_if = [](JsonObject f, std::string_view value) {
    f["show_if"] = JsonObject{{"field", "index_type"}, {"operator", "eq"}, {"value", value}};
    return f;
  };
  fields.push_back(show_if(
      Field("chunk_size", "integer", I18n("Chunk size", "分块大小"),
            I18n("Characters per passage (50 to 8192).", "每个片段的字符数（50 到 8192）。"), 512,
            false),
      "chunk"));
  fields.push_back(Field(
      "overlap", "integer", I18n("Overlap", "重叠"),
      I18n("Characters shared by consecutive passages.", "相邻片段共享的字符数。"), 50, false));
  fields.push_back(show_if(
      Field("parent_chunk_size", "integer", I18n("Parent chunk size", "父块大小"),
            I18n("Characters per parent, returned to the model.", "每个父块的字符数，返回给模型。"),
            2048, false),
      "parent_child"));
  fields.push_back(show_if(
      Field("child_chunk_size", "integer", I18n("Child chunk size", "子块大小"),
            I18n("Characters per child, which is searched.", "每个子块的字符数，用于检索。"), 256,
            false),
      "parent_child"));
  return fields;
}

JsonArray RetrievalSchema() {
  JsonArray fields;
  fields.push_back(
      Field("top_k", "integer", I18n("Top K", "返回数量"),
            I18n("How many passages to return (1 to 50).", "返回的片段数（1 到 50）。"), 5, false));
  auto type = Field("search_type", "select", I18n("Search type", "检索方式"),
                    I18n("vector: by meaning. full_text: by words. hybrid: both, so an exact "
                         "name or number is found even when the embedding misses it.",
                         "vector：按语义。full_text：按关键词。hybrid：两者结合。"),
                    "hybrid", false);
  type["options"] = JsonArray{Option("vector", I18n("Vector", "向量")),
                              Option("full_text", I18n("Full text", "全文")),
                              Option("hybrid", I18n("Hybrid", "混合"))};
  fields.push_back(std::move(type));
  fields.push_back(Field("vector_weight", "float", I18n("Vector weight", "向量权重"),
                         I18n("Hybrid only: the share of the vector score (0 to 1); the rest is "
                              "the keyword score.",
                              "仅混合检索：向量得分所占比例（0 到 1），其余为关键词得分。"),
                         0.7, false));
  fields.push_back(Field("score_threshold", "float", I18n("Score threshold", "分数阈值"),
                         I18n("Passages scoring below this (0 to 1) are left out.",
                              "低于此分数（0 到 1）的片段不返回。"),
                         0.2, false));
  return fields;
}

JsonObject BuiltinEngineName() { return I18n("Switchboard built-in", "Switchboard 内置"); }

JsonObject BuiltinEngineJson() {
  return JsonObject{
      {"plugin_id", kBuiltinEngineId},
      {"name", BuiltinEngineName()},
      {"description",
       I18n("Documents parsed, chunked and embedded here; vector, full-text and hybrid search.",
            "在本机解析、分块并嵌入文档；支持向量、全文与混合检索。")},
      {"capabilities", JsonArray{"doc_ingestion"}},
      {"creation_schema", CreationSchema()},
      {"retrieval_schema", RetrievalSchema()}};
}

JsonObject BuiltinParserJson() {
  JsonArray types;
  for (const auto& t : knowledge::SupportedMimeTypes()) types.push_back(util::Json(t));
  return JsonObject{{"plugin_id", kBuiltinParserId},
                    {"name", I18n("Switchboard built-in parser", "Switchboard 内置解析器")},
                    {"description", I18n("Plain text, Markdown, HTML, PDF and DOCX.",
                                         "纯文本、Markdown、HTML、PDF 与 DOCX。")},
                    {"supported_mime_types", std::move(types)}};
}

}  // namespace sb::services
