#include "storage/postgres/pg_placeholders.hpp"

#include <algorithm>

namespace sb::storage::postgres {
namespace {

constexpr int kMaxParameter = 65535;

bool IsIdentifierChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_' ||
         u == '$' || u >= 0x80;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Index just past a quoted run that starts at `i` (on the opening quote); a doubled quote is an
// escaped one. With `backslashes` (E'...'), a backslash escapes the next character. An
// unterminated run ends at the end of the text; the server then reports the syntax error.
std::size_t SkipQuoted(std::string_view sql, std::size_t i, char quote, bool backslashes) {
  ++i;
  while (i < sql.size()) {
    const char c = sql[i];
    if (backslashes && c == '\\') {
      i += 2;
    } else if (c == quote) {
      if (i + 1 < sql.size() && sql[i + 1] == quote) {
        i += 2;
      } else {
        return i + 1;
      }
    } else {
      ++i;
    }
  }
  return sql.size();
}

// Block comments nest in PostgreSQL.
std::size_t SkipBlockComment(std::string_view sql, std::size_t i) {
  int depth = 0;
  while (i < sql.size()) {
    if (sql.compare(i, 2, "/*") == 0) {
      ++depth;
      i += 2;
    } else if (sql.compare(i, 2, "*/") == 0) {
      i += 2;
      if (--depth == 0) return i;
    } else {
      ++i;
    }
  }
  return sql.size();
}

// The length of a dollar-quote tag ("$$", "$fn$") starting at `i`, or 0 when `$` does not open
// one here ("$1" is a parameter, "a$b" an identifier).
std::size_t DollarTagLength(std::string_view sql, std::size_t i) {
  if (i > 0 && IsIdentifierChar(sql[i - 1])) return 0;
  std::size_t j = i + 1;
  if (j < sql.size() && IsDigit(sql[j])) return 0;
  while (j < sql.size() && sql[j] != '$') {
    if (!IsIdentifierChar(sql[j])) return 0;
    ++j;
  }
  if (j >= sql.size()) return 0;
  return j - i + 1;
}

}  // namespace

util::Result<TranslatedSql> TranslatePlaceholders(std::string_view sql) {
  TranslatedSql out;
  out.text.reserve(sql.size() + 16);
  std::size_t i = 0;
  auto copy_to = [&](std::size_t end) {
    out.text.append(sql.substr(i, end - i));
    i = end;
  };
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\'') {
      // E'...' (any case) takes backslash escapes, unless the E ends a longer identifier.
      const bool escape_string = i > 0 && (sql[i - 1] == 'E' || sql[i - 1] == 'e') &&
                                 (i < 2 || !IsIdentifierChar(sql[i - 2]));
      copy_to(SkipQuoted(sql, i, '\'', escape_string));
    } else if (c == '"') {
      copy_to(SkipQuoted(sql, i, '"', false));
    } else if (c == '-' && sql.compare(i, 2, "--") == 0) {
      const std::size_t end = sql.find('\n', i);
      copy_to(end == std::string_view::npos ? sql.size() : end);
    } else if (c == '/' && sql.compare(i, 2, "/*") == 0) {
      copy_to(SkipBlockComment(sql, i));
    } else if (c == '$') {
      const std::size_t tag_length = DollarTagLength(sql, i);
      if (tag_length == 0) {
        copy_to(i + 1);
        continue;
      }
      const std::string_view tag = sql.substr(i, tag_length);
      const std::size_t close = sql.find(tag, i + tag_length);
      copy_to(close == std::string_view::npos ? sql.size() : close + tag_length);
    } else if (c == '?') {
      std::size_t j = i + 1;
      while (j < sql.size() && IsDigit(sql[j])) ++j;
      long number = 0;
      if (j == i + 1) {
        number = out.parameter_count + 1;
      } else {
        if (j - i - 1 > 5) {
          return util::Fail(util::ErrorCode::kInvalidArgument,
                            "SQL parameter number too large in \"" +
                                std::string(sql.substr(i, std::min<std::size_t>(j - i, 12))) +
                                "\"");
        }
        number = std::stol(std::string(sql.substr(i + 1, j - i - 1)));
      }
      if (number < 1 || number > kMaxParameter) {
        return util::Fail(
            util::ErrorCode::kInvalidArgument,
            "SQL parameter number must be between 1 and 65535, not ?" + std::to_string(number));
      }
      out.parameter_count = std::max(out.parameter_count, static_cast<int>(number));
      out.text.push_back('$');
      out.text.append(std::to_string(number));
      i = j;
    } else {
      // Inside an identifier or keyword nothing can start a quote or parameter except the
      // characters handled above, so copy plain runs in one go.
      std::size_t j = i + 1;
      while (j < sql.size() && sql[j] != '\'' && sql[j] != '"' && sql[j] != '-' && sql[j] != '/' &&
             sql[j] != '$' && sql[j] != '?') {
        ++j;
      }
      copy_to(j);
    }
  }
  return out;
}

}  // namespace sb::storage::postgres
