// Common Markdown as Telegram's MarkdownV2: bold, italic, strike, code and code blocks, links,
// headings shown bold, bullets and quotes; whatever is not recognised is escaped, so the result
// always parses.
#include "platforms/telegram/telegram_markdown.hpp"

#include <algorithm>
#include <cctype>

namespace sb::platforms::telegram {
namespace {

constexpr std::string_view kReserved = "_*[]()~`>#+-=|{}.!\\";

void AppendEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    if (kReserved.find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
}

void AppendCodeEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    if (c == '`' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
}

void AppendUrlEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    if (c == ')' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
// Letters, digits and any non-ASCII byte: an '_' between two of them is part of a word.
bool IsWordChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || std::isalnum(u) != 0;
}

enum InlineFlag : unsigned { kInBold = 1, kInItalic = 2, kInStrike = 4, kInLink = 8 };

void ConvertInline(std::string_view s, unsigned flags, std::string& out);

// The closing single `c` of an italic opened at `open`, or npos.
std::size_t FindItalicClose(std::string_view s, std::size_t open, char c) {
  for (std::size_t j = open + 1; j < s.size(); ++j) {
    if (s[j] == '`') {  // a code span hides its contents
      const auto end = s.find('`', j + 1);
      if (end == std::string_view::npos) return std::string_view::npos;
      j = end;
      continue;
    }
    if (s[j] != c) continue;
    if (j + 1 < s.size() && s[j + 1] == c) {
      ++j;  // a doubled marker (bold) is not the close
      continue;
    }
    if (IsSpace(s[j - 1])) continue;
    if (c == '_' && j + 1 < s.size() && IsWordChar(s[j + 1])) continue;
    if (j == open + 1) continue;
    return j;
  }
  return std::string_view::npos;
}

void ConvertInline(std::string_view s, unsigned flags, std::string& out) {
  std::size_t text_start = 0;
  auto flush = [&](std::size_t end) { AppendEscaped(out, s.substr(text_start, end - text_start)); };
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\\' && i + 1 < s.size() && std::ispunct(static_cast<unsigned char>(s[i + 1]))) {
      flush(i);
      AppendEscaped(out, s.substr(i + 1, 1));
      i += 2;
      text_start = i;
      continue;
    }
    if (c == '`') {
      std::size_t n = 0;
      while (i + n < s.size() && s[i + n] == '`') ++n;
      const auto close = s.find(std::string(n, '`'), i + n);
      if (close != std::string_view::npos && close > i + n) {
        flush(i);
        out.push_back('`');
        AppendCodeEscaped(out, s.substr(i + n, close - i - n));
        out.push_back('`');
        i = close + n;
        text_start = i;
      } else {
        i += n;  // unmatched: literal backticks, escaped with the text
      }
      continue;
    }
    const bool doubled = i + 1 < s.size() && s[i + 1] == c;
    if ((c == '*' || c == '_') && doubled && !(flags & kInBold) && i + 2 < s.size() &&
        !IsSpace(s[i + 2])) {
      const auto close = s.find(s.substr(i, 2), i + 2);
      if (close != std::string_view::npos && close > i + 2 && !IsSpace(s[close - 1])) {
        flush(i);
        out.push_back('*');
        ConvertInline(s.substr(i + 2, close - i - 2), flags | kInBold, out);
        out.push_back('*');
        i = close + 2;
        text_start = i;
        continue;
      }
    }
    if ((c == '*' || c == '_') && !doubled && !(flags & kInItalic) && i + 1 < s.size() &&
        !IsSpace(s[i + 1]) && !(c == '_' && i > 0 && IsWordChar(s[i - 1])) &&
        !(i > 0 && s[i - 1] == c)) {
      const auto close = FindItalicClose(s, i, c);
      if (close != std::string_view::npos) {
        flush(i);
        out.push_back('_');
        ConvertInline(s.substr(i + 1, close - i - 1), flags | kInItalic, out);
        out.push_back('_');
        i = close + 1;
        text_start = i;
        continue;
      }
    }
    if (c == '~' && doubled && !(flags & kInStrike)) {
      const auto close = s.find("~~", i + 2);
      if (close != std::string_view::npos && close > i + 2) {
        flush(i);
        out.push_back('~');
        ConvertInline(s.substr(i + 2, close - i - 2), flags | kInStrike, out);
        out.push_back('~');
        i = close + 2;
        text_start = i;
        continue;
      }
    }
    if (c == '[' && !(flags & kInLink)) {
      const auto rb = s.find(']', i + 1);
      if (rb != std::string_view::npos && rb > i + 1 && rb + 1 < s.size() && s[rb + 1] == '(') {
        // The URL may hold balanced parentheses (Wikipedia links do).
        std::size_t rp = std::string_view::npos;
        int depth = 0;
        for (std::size_t j = rb + 2; j < s.size() && rp == std::string_view::npos; ++j) {
          if (s[j] == '(') ++depth;
          if (s[j] == ')' && depth-- == 0) rp = j;
        }
        if (rp != std::string_view::npos && rp > rb + 2) {
          flush(i);
          out.push_back('[');
          ConvertInline(s.substr(i + 1, rb - i - 1), flags | kInLink, out);
          out += "](";
          AppendUrlEscaped(out, s.substr(rb + 2, rp - rb - 2));
          out.push_back(')');
          i = rp + 1;
          text_start = i;
          continue;
        }
      }
    }
    ++i;
  }
  flush(s.size());
}

std::string_view TrimLeft(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

std::string StripBoldMarkers(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i + 1 < s.size() && (s[i] == '*' || s[i] == '_') && s[i + 1] == s[i]) {
      ++i;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

void ConvertLine(std::string_view line, std::string& out) {
  const std::string_view trimmed = TrimLeft(line);
  const std::string_view indent = line.substr(0, line.size() - trimmed.size());
  std::size_t hashes = 0;
  while (hashes < trimmed.size() && trimmed[hashes] == '#') ++hashes;
  if (hashes >= 1 && hashes <= 6 && hashes < trimmed.size() && trimmed[hashes] == ' ') {
    const std::string title = StripBoldMarkers(TrimLeft(trimmed.substr(hashes)));
    out.push_back('*');
    ConvertInline(title, kInBold, out);
    out.push_back('*');
    return;
  }
  if (trimmed.starts_with(">")) {
    out.push_back('>');
    std::string_view rest = trimmed.substr(1);
    if (rest.starts_with(" ")) rest.remove_prefix(1);
    ConvertInline(rest, 0, out);
    return;
  }
  if (trimmed.size() >= 2 && (trimmed[0] == '-' || trimmed[0] == '*' || trimmed[0] == '+') &&
      trimmed[1] == ' ') {
    out += indent;
    out += "• ";
    ConvertInline(trimmed.substr(2), 0, out);
    return;
  }
  ConvertInline(line, 0, out);
}

std::string CodeLanguage(std::string_view info) {
  info = TrimLeft(info);
  std::string lang;
  for (char c : info) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '+' || c == '-')) break;
    lang.push_back(c);
  }
  return lang;
}

}  // namespace

std::string EscapeMarkdownV2(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  AppendEscaped(out, text);
  return out;
}

std::string MarkdownToMarkdownV2(std::string_view markdown) {
  std::string out;
  out.reserve(markdown.size() + markdown.size() / 4);
  bool in_code = false;
  std::size_t pos = 0;
  bool first = true;
  while (pos <= markdown.size()) {
    auto nl = markdown.find('\n', pos);
    if (nl == std::string_view::npos) nl = markdown.size();
    const std::string_view line = markdown.substr(pos, nl - pos);
    pos = nl + 1;
    const std::string_view trimmed = TrimLeft(line);
    if (trimmed.starts_with("```")) {
      if (!first) out.push_back('\n');
      first = false;
      if (!in_code) {
        out += "```" + CodeLanguage(trimmed.substr(3));
        in_code = true;
      } else {
        out += "```";
        in_code = false;
      }
      continue;
    }
    if (!first) out.push_back('\n');
    first = false;
    if (in_code) {
      AppendCodeEscaped(out, line);
    } else {
      ConvertLine(line, out);
    }
  }
  if (in_code) out += "\n```";  // an unclosed block (or a split one) is closed at the end
  return out;
}

}  // namespace sb::platforms::telegram
