#include "knowledge/retrieval_scoring.hpp"

#include <algorithm>
#include <cmath>

#include "util/utf8.hpp"

namespace sb::knowledge {
namespace {

// Han, kana, Hangul and the CJK punctuation around them: scripts written without spaces.
bool IsCjk(char32_t cp) {
  return (cp >= 0x2E80 && cp <= 0x9FFF) ||  // radicals, punctuation, kana, CJK unified
         (cp >= 0xAC00 && cp <= 0xD7AF) ||  // Hangul syllables
         (cp >= 0xF900 && cp <= 0xFAFF) ||  // compatibility ideographs
         (cp >= 0xFF00 && cp <= 0xFFEF) ||  // full-width forms
         (cp >= 0x20000 && cp <= 0x3FFFF);  // extension planes
}

// What FTS5's unicode61 tokenizer keeps inside a token (ASCII letters and digits, and every
// non-ASCII code point it does not class as a separator; approximated by "not ASCII").
bool IsWordPart(char32_t cp) {
  if (cp >= 0x80) return true;
  return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
}

// English words so common that matching them says nothing about a passage; left out of keyword
// queries (unless the query has nothing else), as they match most passages of a base and make
// FTS5 rank all of them.
bool IsStopWord(std::string_view word) {
  static constexpr std::string_view kWords[] = {
      "a",     "about", "an",   "and",  "are",  "as",   "at",    "be",   "by",    "can",  "could",
      "did",   "do",    "does", "for",  "from", "had",  "has",   "have", "he",    "her",  "his",
      "how",   "i",     "if",   "in",   "is",   "it",   "its",   "me",   "my",    "no",   "not",
      "of",    "on",    "or",   "our",  "she",  "so",   "that",  "the",  "their", "them", "then",
      "there", "these", "they", "this", "to",   "us",   "was",   "we",   "were",  "what", "when",
      "where", "which", "who",  "why",  "will", "with", "would", "you",  "your"};
  if (word.size() > 5) return false;
  std::string lower(word);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto w : kWords) {
    if (w == lower) return true;
  }
  return false;
}

}  // namespace

std::string KeywordText(std::string_view text) {
  const std::string valid = util::ToValidUtf8(text);
  std::string out;
  out.reserve(valid.size() + valid.size() / 2);
  for (std::size_t i = 0; i < valid.size();) {
    char32_t cp = 0;
    const std::size_t n = util::NextCodePoint(valid, i, cp);
    if (IsCjk(cp)) {
      out += ' ';
      out.append(valid, i, n);
      out += ' ';
    } else {
      out.append(valid, i, n);
    }
    i += n;
  }
  return out;
}

std::string KeywordQuery(std::string_view query, std::size_t max_terms) {
  const std::string valid = util::ToValidUtf8(query);
  std::vector<std::string> terms;
  std::vector<std::string> stop_words;  // used only when the query has nothing else
  std::string word;                     // a run of word characters outside CJK
  std::string phrase;                   // a run of CJK characters, spaced apart
  auto flush_word = [&] {
    if (!word.empty()) {
      auto& list = IsStopWord(word) ? stop_words : terms;
      if (list.size() < max_terms) list.push_back('"' + word + '"');
    }
    word.clear();
  };
  auto flush_phrase = [&] {
    if (!phrase.empty() && terms.size() < max_terms) terms.push_back('"' + phrase + '"');
    phrase.clear();
  };
  for (std::size_t i = 0; i < valid.size();) {
    char32_t cp = 0;
    const std::size_t n = util::NextCodePoint(valid, i, cp);
    if (IsCjk(cp)) {
      flush_word();
      // CJK punctuation (、。「」 and the like, U+3000..U+303F, full-width forms) ends a phrase.
      if ((cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFF00 && cp <= 0xFF0F)) {
        flush_phrase();
      } else {
        if (!phrase.empty()) phrase += ' ';
        phrase.append(valid, i, n);
      }
    } else if (IsWordPart(cp)) {
      flush_phrase();
      word.append(valid, i, n);
    } else {
      flush_word();
      flush_phrase();
    }
    i += n;
  }
  flush_word();
  flush_phrase();
  if (terms.empty()) terms = std::move(stop_words);
  // In the query's order; a repeated term adds nothing to an OR.
  std::string out;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (std::find(terms.begin(), terms.begin() + static_cast<std::ptrdiff_t>(i), terms[i]) !=
        terms.begin() + static_cast<std::ptrdiff_t>(i)) {
      continue;
    }
    if (!out.empty()) out += " OR ";
    out += terms[i];
  }
  return out;
}

std::optional<SearchType> SearchTypeFrom(std::string_view name) {
  if (name == "vector") return SearchType::kVector;
  if (name == "full_text") return SearchType::kFullText;
  if (name == "hybrid") return SearchType::kHybrid;
  return std::nullopt;
}

const char* SearchTypeName(SearchType type) {
  switch (type) {
    case SearchType::kVector:
      return "vector";
    case SearchType::kFullText:
      return "full_text";
    case SearchType::kHybrid:
      return "hybrid";
  }
  return "hybrid";
}

std::vector<ScoredCandidate> RankCandidates(const std::vector<Candidate>& candidates,
                                            SearchType type, double vector_weight, double threshold,
                                            std::size_t top_k) {
  // BM25 from FTS5 is negative, better when lower: the best match of this query is the scale.
  double best_bm25 = 0;
  for (const auto& c : candidates) {
    if (c.bm25 && -*c.bm25 > best_bm25) best_bm25 = -*c.bm25;
  }
  const double w = std::isfinite(vector_weight) ? std::clamp(vector_weight, 0.0, 1.0) : 0.7;
  std::vector<ScoredCandidate> out;
  out.reserve(candidates.size());
  for (const auto& c : candidates) {
    ScoredCandidate s;
    s.id = c.id;
    s.vector_score = c.cosine && std::isfinite(*c.cosine) ? std::max(0.0, double(*c.cosine)) : 0;
    s.keyword_score = c.bm25 && best_bm25 > 0 ? std::clamp(-*c.bm25 / best_bm25, 0.0, 1.0) : 0;
    // FTS5 may give a match a score of 0 when every document holds its terms; it is still a match.
    if (c.bm25 && best_bm25 <= 0) s.keyword_score = 1;
    switch (type) {
      case SearchType::kVector:
        s.score = s.vector_score;
        break;
      case SearchType::kFullText:
        s.score = s.keyword_score;
        break;
      case SearchType::kHybrid:
        s.score = w * s.vector_score + (1 - w) * s.keyword_score;
        break;
    }
    if (s.score < threshold || (type == SearchType::kFullText && !c.bm25)) continue;
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const ScoredCandidate& a, const ScoredCandidate& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
  if (out.size() > top_k) out.resize(top_k);
  return out;
}

}  // namespace sb::knowledge
