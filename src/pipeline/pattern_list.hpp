// User-supplied patterns (trigger regexps, ignore rules, ban words) compiled once and matched
// without ever throwing: an invalid pattern is dropped with a warning, a match that fails at run
// time counts as no match.
//   std::vector<std::string> warnings;
//   PatternList list = PatternList::Compile({"^hi", "(bad"}, warnings);  // one warning
//   bool hit = list.Search("hi there");
#pragma once

#include <boost/regex.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::pipeline {

// Patterns come from tenants' configs, so matching must be bounded: Boost.Regex matches without
// recursion and gives up (an exception, treated as no match) past its complexity bound, where
// libstdc++'s std::regex recursed until the stack overflowed. Real regexes still see at most
// kMaxRegexInputBytes of a text, in pieces of at most kMaxRegexPieceBytes cut at line breaks where
// possible, to bound the time per message: a match spanning two pieces or past the cap is missed.
// Literal patterns (most ban words) see the whole text.
inline constexpr std::size_t kMaxRegexPieceBytes = 1024;
inline constexpr std::size_t kMaxRegexInputBytes = 16 * 1024;
// LangBot's own limits on tenant patterns (utils/safe_regex.py).
inline constexpr std::size_t kMaxPatternCount = 256;
inline constexpr std::size_t kMaxPatternBytes = 1024;

class PatternList {
 public:
  // Patterns follow ECMAScript syntax (close to Python's `re` for what users write); a leading
  // "(?i)" is honoured as case-insensitive, since Python users write it and ECMAScript has none.
  // A pattern without regex metacharacters is matched as plain text. Empty, oversized, surplus
  // and invalid patterns are skipped, each with a line appended to `warnings`.
  static PatternList Compile(const std::vector<std::string>& patterns,
                             std::vector<std::string>& warnings);

  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }

  // Python re.search: any pattern matches anywhere in `text`.
  bool Search(std::string_view text) const;
  // Python re.match: any pattern matches at the start of `text` (not necessarily all of it).
  bool MatchAtStart(std::string_view text) const;
  // Applies every pattern in order (like LangBot's successive re.sub), replacing each non-empty
  // match by `replacement(match)`. Returns whether anything was replaced.
  bool ReplaceAll(std::string& text,
                  const std::function<std::string(std::string_view)>& replacement) const;

 private:
  struct Entry {
    std::string source;
    bool literal = false;
    boost::regex regex;
  };
  std::vector<Entry> entries_;
};

// Number of Unicode code points in UTF-8 `text` (what Python's len() counts); invalid bytes count
// one each.
std::size_t CodePointCount(std::string_view text);

}  // namespace sb::pipeline
