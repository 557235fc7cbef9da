#include "pipeline/pattern_list.hpp"

namespace sb::pipeline {
namespace {

bool IsLiteral(std::string_view pattern) {
  return pattern.find_first_of("\\^$.|?*+()[]{}") == std::string_view::npos;
}

// Splits the first kMaxRegexInputBytes of `text` into pieces of at most kMaxRegexPieceBytes,
// preferring to cut after a '\n' and never cutting inside a UTF-8 sequence. The pieces are
// contiguous from the start; what they leave out is text.substr(total size).
std::vector<std::string_view> Pieces(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t budget = kMaxRegexInputBytes;
  while (text.size() > kMaxRegexPieceBytes && budget >= kMaxRegexPieceBytes) {
    std::size_t cut = text.rfind('\n', kMaxRegexPieceBytes - 1);
    if (cut == std::string_view::npos) {
      cut = kMaxRegexPieceBytes;
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
      if (cut == 0) cut = kMaxRegexPieceBytes;
    } else {
      cut += 1;
    }
    out.push_back(text.substr(0, cut));
    text.remove_prefix(cut);
    budget -= cut;
  }
  if (text.size() <= budget) out.push_back(text);
  return out;
}

std::size_t TotalSize(const std::vector<std::string_view>& pieces) {
  std::size_t total = 0;
  for (auto piece : pieces) total += piece.size();
  return total;
}

}  // namespace

PatternList PatternList::Compile(const std::vector<std::string>& patterns,
                                 std::vector<std::string>& warnings) {
  PatternList list;
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const std::string& source = patterns[i];
    if (list.entries_.size() >= kMaxPatternCount) {
      warnings.push_back("only the first " + std::to_string(kMaxPatternCount) +
                         " patterns are used");
      break;
    }
    // An empty pattern would match every message; in a console list it is an unfilled row.
    if (source.empty()) {
      warnings.push_back("pattern " + std::to_string(i) + " is empty and was skipped");
      continue;
    }
    if (source.size() > kMaxPatternBytes) {
      warnings.push_back("pattern " + std::to_string(i) + " is longer than " +
                         std::to_string(kMaxPatternBytes) + " bytes and was skipped");
      continue;
    }
    Entry entry;
    entry.source = source;
    std::string_view body = source;
    boost::regex::flag_type flags = boost::regex::perl;
    if (body.starts_with("(?i)")) {
      body.remove_prefix(4);
      flags |= boost::regex::icase;
      if (body.empty()) {  // "(?i)" alone would match every text
        warnings.push_back("pattern " + std::to_string(i) + " is empty and was skipped");
        continue;
      }
    } else if (IsLiteral(body)) {
      entry.literal = true;
      list.entries_.push_back(std::move(entry));
      continue;
    }
    try {
      entry.regex = boost::regex(body.begin(), body.end(), flags);
    } catch (const std::runtime_error& e) {  // boost::regex_error derives from it
      warnings.push_back("pattern " + std::to_string(i) + " '" + source +
                         "' is not a valid regular expression (" + e.what() + ") and was skipped");
      continue;
    }
    list.entries_.push_back(std::move(entry));
  }
  return list;
}

bool PatternList::Search(std::string_view text) const {
  for (const Entry& entry : entries_) {
    if (entry.literal) {
      if (text.find(entry.source) != std::string_view::npos) return true;
      continue;
    }
    for (std::string_view piece : Pieces(text)) {
      try {
        if (boost::regex_search(piece.begin(), piece.end(), entry.regex)) return true;
      } catch (const std::runtime_error&) {
        // Boost.Regex gave up (its matching-complexity bound): treated as no match.
      }
    }
  }
  return false;
}

bool PatternList::MatchAtStart(std::string_view text) const {
  // A match anchored at the start only needs the first piece.
  std::vector<std::string_view> pieces = Pieces(text);
  std::string_view head = pieces.empty() ? std::string_view() : pieces.front();
  for (const Entry& entry : entries_) {
    if (entry.literal) {
      if (text.starts_with(entry.source)) return true;
      continue;
    }
    try {
      if (boost::regex_search(head.begin(), head.end(), entry.regex, boost::match_continuous)) {
        return true;
      }
    } catch (const std::runtime_error&) {
    }
  }
  return false;
}

bool PatternList::ReplaceAll(
    std::string& text, const std::function<std::string(std::string_view)>& replacement) const {
  bool replaced = false;
  for (const Entry& entry : entries_) {
    std::string out;
    if (entry.literal) {
      std::size_t from = 0;
      std::size_t at = text.find(entry.source);
      if (at == std::string::npos) continue;
      while (at != std::string::npos) {
        out.append(text, from, at - from);
        out += replacement(entry.source);
        from = at + entry.source.size();
        at = text.find(entry.source, from);
      }
      out.append(text, from, std::string::npos);
      text = std::move(out);
      replaced = true;
      continue;
    }
    bool hit = false;
    std::vector<std::string_view> pieces = Pieces(text);
    for (std::string_view piece : pieces) {
      std::string piece_out;
      try {
        auto last = piece.begin();
        for (boost::cregex_iterator it(piece.begin(), piece.end(), entry.regex), end; it != end;
             ++it) {
          const auto& match = *it;
          // Python masks empty matches with nothing yet still reports a hit, which would block
          // every message for a pattern like "x*"; empty matches are ignored instead.
          if (match.length(0) == 0) continue;
          piece_out.append(last, match[0].first);
          piece_out += replacement(std::string_view(match[0].first, match.length(0)));
          last = match[0].second;
          hit = true;
        }
        piece_out.append(last, piece.end());
      } catch (const std::runtime_error&) {
        piece_out.assign(piece.begin(), piece.end());
      }
      out += piece_out;
    }
    if (hit) {
      out.append(std::string_view(text).substr(TotalSize(pieces)));
      text = std::move(out);
      replaced = true;
    }
  }
  return replaced;
}

std::size_t CodePointCount(std::string_view text) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < text.size();) {
    auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = byte < 0x80           ? 1
                         : (byte >> 5) == 0x6  ? 2
                         : (byte >> 4) == 0xE  ? 3
                         : (byte >> 3) == 0x1E ? 4
                                               : 1;
    if (i + length > text.size()) length = 1;
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) {
        length = 1;
        break;
      }
    }
    i += length;
    ++count;
  }
  return count;
}

}  // namespace sb::pipeline
