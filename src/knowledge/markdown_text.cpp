// Markdown to plain text for retrieval: the words stay, the markup that is noise for a search
// goes. Headings become their own paragraph, code keeps its code (fences dropped), emphasis
// markers, link targets, image sources, reference definitions and inline HTML tags go; a link
// keeps its text and an image its alt text. Line by line, each line in one pass: every search
// forward either consumes what it scanned or is cached, so any input is linear.
#include <cctype>
#include <string>
#include <string_view>

#include "knowledge/document_text_internal.hpp"

namespace sb::knowledge::detail {
namespace {

constexpr std::size_t kMaxLinkText = 4096;  // longer "[...]" spans are kept as they are

bool IsWordByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || std::isalnum(u);
}

std::string_view TrimLeft(std::string_view s, std::size_t max_spaces = std::string_view::npos) {
  std::size_t k = 0;
  while (k < s.size() && k < max_spaces && (s[k] == ' ' || s[k] == '\t')) ++k;
  return s.substr(k);
}

std::string_view Trim(std::string_view s) {
  s = TrimLeft(s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The first `c` at or after a position, remembered: positions only grow within one line.
class NextOf {
 public:
  explicit NextOf(char c) : c_(c) {}
  std::size_t Find(std::string_view s, std::size_t from) {
    if (!valid_ || (pos_ != std::string_view::npos && pos_ < from)) {
      pos_ = s.find(c_, from);
      valid_ = true;
    }
    return pos_;
  }

 private:
  char c_;
  bool valid_ = false;
  std::size_t pos_ = 0;
};

class InlineText {
 public:
  InlineText(std::string_view s, std::string& out, int depth) : s_(s), out_(out), depth_(depth) {}

  void Run() {
    std::size_t i = 0;
    while (i < s_.size()) i = Step(i);
  }

 private:
  std::size_t Step(std::size_t i) {
    const char c = s_[i];
    const std::size_t n = s_.size();
    if (c == '\\' && i + 1 < n && std::ispunct(static_cast<unsigned char>(s_[i + 1]))) {
      out_ += s_[i + 1];
      return i + 2;
    }
    if (c == '`') return CodeSpan(i);
    if (c == '!' && i + 1 < n && s_[i + 1] == '[') {
      const std::size_t end = Link(i + 1, /*image=*/true);
      if (end != 0) return end;
    }
    if (c == '[') {
      const std::size_t end = Link(i, /*image=*/false);
      if (end != 0) return end;
    }
    if (c == '<') return Angle(i);
    if (c == '&') {
      const std::size_t used = DecodeEntity(s_, i, out_);
      if (used != 0) return i + used;
    }
    if (c == '*' || c == '_' || c == '~') return Emphasis(i);
    out_ += c;
    return i + 1;
  }

  // `code` keeps its text verbatim; an unmatched run of backticks is text.
  std::size_t CodeSpan(std::size_t i) {
    std::size_t r = 0;
    while (i + r < s_.size() && s_[i + r] == '`') ++r;
    const std::string run(r, '`');
    std::size_t close = std::string_view::npos;
    if (r >= sizeof(failed_code_runs_) * 8 || !(failed_code_runs_ >> r & 1)) {
      close = s_.find(run, i + r);
      if (close == std::string_view::npos && r < sizeof(failed_code_runs_) * 8) {
        failed_code_runs_ |= std::uint64_t{1} << r;
      }
    }
    if (close == std::string_view::npos) {
      out_ += run;
      return i + r;
    }
    out_ += Trim(s_.substr(i + r, close - i - r));
    return close + r;
  }

  // [text](target), [text][ref], ![alt](source): the text (alt) stays. 0 when `i` starts none.
  std::size_t Link(std::size_t i, bool image) {
    const std::size_t close = brackets_.Find(s_, i + 1);
    if (close == std::string_view::npos || close - i > kMaxLinkText || close + 1 >= s_.size()) {
      return 0;
    }
    const char next = s_[close + 1];
    std::size_t end;
    if (next == '(') {
      end = parens_.Find(s_, close + 2);
    } else if (next == '[') {
      end = brackets_.Find(s_, close + 2);
    } else {
      return 0;
    }
    if (end == std::string_view::npos || end - close > kMaxLinkText) return 0;
    const std::string_view label = s_.substr(i + 1, close - i - 1);
    if (image || depth_ > 0) {
      out_ += label;
    } else {
      InlineText(label, out_, depth_ + 1).Run();
    }
    return end + 1;
  }

  // <https://example.com> keeps its address; <span class="x"> and </span> go; "a < b" stays.
  std::size_t Angle(std::size_t i) {
    const std::size_t close = angles_.Find(s_, i + 1);
    const bool tag_like =
        i + 1 < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[i + 1])) ||
                              s_[i + 1] == '/' || s_[i + 1] == '!');
    if (close == std::string_view::npos || !tag_like || close - i > kMaxLinkText) {
      out_ += '<';
      return i + 1;
    }
    const std::string_view inner = s_.substr(i + 1, close - i - 1);
    const bool autolink =
        inner.find(' ') == std::string_view::npos &&
        (inner.find("://") != std::string_view::npos || inner.find('@') != std::string_view::npos);
    if (autolink) out_ += inner;
    return close + 1;
  }

  // A run of * _ ~~ at a word's edge is emphasis and goes; inside a word (snake_case, 2*3) or
  // standing alone it is text.
  std::size_t Emphasis(std::size_t i) {
    const char c = s_[i];
    std::size_t r = 0;
    while (i + r < s_.size() && s_[i + r] == c) ++r;
    const bool word_before = i > 0 && IsWordByte(s_[i - 1]);
    const bool word_after = i + r < s_.size() && IsWordByte(s_[i + r]);
    const bool space_before = i == 0 || s_[i - 1] == ' ' || s_[i - 1] == '\t';
    const bool space_after = i + r >= s_.size() || s_[i + r] == ' ' || s_[i + r] == '\t';
    const bool marker =
        !(word_before && word_after) && !(space_before && space_after) && !(c == '~' && r < 2);
    if (!marker) out_.append(r, c);
    return i + r;
  }

  std::string_view s_;
  std::string& out_;
  int depth_;
  NextOf brackets_{']'};
  NextOf parens_{')'};
  NextOf angles_{'>'};
  std::uint64_t failed_code_runs_ = 0;  // bit r: no closing run of r backticks in the rest
};

bool IsRule(std::string_view line) {
  std::size_t count = 0;
  char mark = 0;
  for (char c : line) {
    if (c == ' ' || c == '\t') continue;
    if ((c != '-' && c != '=' && c != '*' && c != '_') || (mark != 0 && c != mark)) return false;
    mark = c;
    ++count;
  }
  return count >= 3 || (mark == '=' && count >= 1);
}

bool IsTableSeparator(std::string_view line) {
  bool dash = false;
  bool pipe = false;
  for (char c : line) {
    if (c == '-') {
      dash = true;
    } else if (c == '|') {
      pipe = true;
    } else if (c != ':' && c != ' ' && c != '\t') {
      return false;
    }
  }
  return dash && pipe;
}

// "- item", "* item", "+ item", "12. item", "3) item", then "[ ] " or "[x] " of a task list.
std::string_view StripListMarker(std::string_view line) {
  std::size_t k = 0;
  if (!line.empty() && (line[0] == '-' || line[0] == '*' || line[0] == '+')) {
    k = 1;
  } else {
    while (k < line.size() && k < 9 && std::isdigit(static_cast<unsigned char>(line[k]))) ++k;
    if (k == 0 || k >= line.size() || (line[k] != '.' && line[k] != ')')) return line;
    ++k;
  }
  if (k < line.size() && line[k] != ' ' && line[k] != '\t') return line;
  line = TrimLeft(line.substr(k));
  if (line.size() >= 3 && line[0] == '[' && line[2] == ']' &&
      (line[1] == ' ' || line[1] == 'x' || line[1] == 'X')) {
    line = TrimLeft(line.substr(3));
  }
  return line;
}

}  // namespace

util::Result<std::string> MarkdownText(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  char fence = 0;  // '`' or '~' inside a fenced code block
  std::size_t fence_length = 0;
  std::size_t start = 0;
  while (start <= bytes.size()) {
    std::size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    std::string_view line = bytes.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    const std::string_view indented = TrimLeft(line, 3);
    std::size_t run = 0;
    while (run < indented.size() && (indented[run] == '`' || indented[run] == '~') &&
           indented[run] == indented[0]) {
      ++run;
    }
    if (fence != 0) {
      if (run >= fence_length && indented[0] == fence && Trim(indented.substr(run)).empty()) {
        fence = 0;
        out += "\n\n";
      } else {
        out += line;
        out += '\n';
      }
      continue;
    }
    if (run >= 3) {  // an opening fence; its info string ("cpp") is not text
      fence = indented[0];
      fence_length = run;
      out += "\n\n";
      continue;
    }
    std::string_view text = indented;
    while (!text.empty() && text[0] == '>') text = TrimLeft(text.substr(1), 1);
    text = Trim(text);
    if (text.empty() || IsRule(text)) {
      out += "\n\n";
      continue;
    }
    if (const auto label_end = text.find(']');
        text[0] == '[' && label_end < kMaxLinkText && text.compare(label_end, 2, "]:") == 0) {
      continue;  // [a ref]: https://target "title"
    }
    if (IsTableSeparator(text)) continue;
    std::size_t hashes = 0;
    while (hashes < text.size() && text[hashes] == '#') ++hashes;
    if (hashes >= 1 && hashes <= 6 && (hashes == text.size() || text[hashes] == ' ')) {
      std::string_view heading = Trim(text.substr(hashes));
      const auto last = heading.find_last_not_of('#');
      if (last == std::string_view::npos) {
        heading = {};
      } else if (last + 1 < heading.size() && heading[last] == ' ') {
        heading = Trim(heading.substr(0, last + 1));
      }
      out += "\n\n";
      InlineText(heading, out, 0).Run();
      out += "\n\n";
      continue;
    }
    text = StripListMarker(text);
    if (text.size() >= 2 && text.front() == '|' && text.back() == '|') {
      text = Trim(text.substr(1, text.size() - 2));
    }
    InlineText(text, out, 0).Run();
    out += '\n';
  }
  return out;
}

}  // namespace sb::knowledge::detail
