// How a query meets the passages of a knowledge base: the text the keyword index (SQLite FTS5,
// unicode61 tokenizer) stores and searches, and how vector and keyword results are fused.
//
// FTS5's tokenizer does not split Chinese or Japanese into words, so each CJK character is made
// a token of its own (a space either side); a CJK run in a query becomes a phrase, which matches
// those characters side by side. Latin words, names and numbers are left as they are.
//
// Fusion (hybrid search): every candidate found by either side gets
//   score = w * max(0, cosine) + (1 - w) * keyword,
// where keyword is the candidate's BM25 relative to the best keyword match of the query (1 for
// the best, 0 when not a keyword match) and w the base's `vector_weight`. The cosine is exact
// for every candidate, so a passage the keyword side found still gets its vector score; and an
// exact name or number the embedding misses still scores (1 - w).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::knowledge {

// The text to store in the keyword index for `text` (CJK characters spaced apart).
std::string KeywordText(std::string_view text);

// An FTS5 MATCH expression for a user's query: its words and CJK phrases, each quoted (so no
// character of the query is FTS5 syntax), joined by OR, in the query's order. Very common
// English words ("the", "how", ...) are left out unless the query has nothing else. Empty when
// the query has no word. Bounded: at most `max_terms` terms.
std::string KeywordQuery(std::string_view query, std::size_t max_terms = 32);

enum class SearchType { kVector, kFullText, kHybrid };
// "vector", "full_text", "hybrid"; nullopt otherwise.
std::optional<SearchType> SearchTypeFrom(std::string_view name);
const char* SearchTypeName(SearchType type);

struct Candidate {
  std::int64_t id = 0;
  std::optional<float> cosine;  // similarity to the query's vector, when known
  std::optional<double> bm25;   // FTS5 bm25() (lower is better), when a keyword match
};

struct ScoredCandidate {
  std::int64_t id = 0;
  double score = 0;          // what the threshold and the order use, in [0, 1]
  double vector_score = 0;   // max(0, cosine)
  double keyword_score = 0;  // relative BM25 in [0, 1]
};

// Scores `candidates` for `type` (vector: the cosine; full_text: the keyword score; hybrid: the
// fusion above with `vector_weight` clamped to [0, 1]), drops those below `threshold`, and
// returns the best `top_k`, best first (ties by id).
std::vector<ScoredCandidate> RankCandidates(const std::vector<Candidate>& candidates,
                                            SearchType type, double vector_weight, double threshold,
                                            std::size_t top_k);

}  // namespace sb::knowledge
