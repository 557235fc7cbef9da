// Our own HTML text extractor: one forward pass, linear in the input, tolerant of any bytes.
// Content nobody reads (script, style, head, template, noscript, comments) goes; block elements
// become line or paragraph breaks; character references are decoded; whitespace collapses except
// inside <pre>. Unterminated tags, quotes and comments end the text instead of looping or
// re-scanning (every search either consumes what it scanned or is remembered as failed).
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>
#include <unordered_map>

#include "knowledge/document_text_internal.hpp"

namespace sb::knowledge::detail {
namespace {

constexpr std::array<std::string_view, 33> kParagraphTags = {
    "address", "article", "aside",    "blockquote", "center", "details", "dialog",
    "div",     "dl",      "fieldset", "figcaption", "figure", "footer",  "form",
    "h1",      "h2",      "h3",       "h4",         "h5",     "h6",      "header",
    "hgroup",  "main",    "nav",      "ol",         "p",      "section", "summary",
    "table",   "ul",      "body",     "html",       "hr"};
constexpr std::array<std::string_view, 10> kLineTags = {
    "br", "li", "tr", "dt", "dd", "caption", "option", "thead", "tbody", "tfoot"};
constexpr std::array<std::string_view, 2> kCellTags = {"td", "th"};
// Elements whose content is dropped: found by their closing tag.
constexpr std::array<std::string_view, 7> kDroppedTags = {
    "script", "style", "template", "noscript", "head", "iframe", "object"};

template <std::size_t N>
bool In(const std::array<std::string_view, N>& set, std::string_view name) {
  return std::find(set.begin(), set.end(), name) != set.end();
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

bool StartsWithNoCase(std::string_view s, std::size_t at, std::string_view prefix) {
  if (s.size() - at < prefix.size()) return false;
  for (std::size_t k = 0; k < prefix.size(); ++k) {
    if (std::tolower(static_cast<unsigned char>(s[at + k])) != prefix[k]) return false;
  }
  return true;
}

const std::unordered_map<std::string_view, char32_t>& NamedEntities() {
  static const auto* table = new std::unordered_map<std::string_view, char32_t>{
      {"amp", '&'},      {"lt", '<'},        {"gt", '>'},       {"quot", '"'},
      {"apos", '\''},    {"nbsp", 0xA0},     {"ensp", ' '},     {"emsp", ' '},
      {"thinsp", ' '},   {"shy", 0xAD},      {"copy", 0xA9},    {"reg", 0xAE},
      {"trade", 0x2122}, {"hellip", 0x2026}, {"mdash", 0x2014}, {"ndash", 0x2013},
      {"lsquo", 0x2018}, {"rsquo", 0x2019},  {"ldquo", 0x201C}, {"rdquo", 0x201D},
      {"sbquo", 0x201A}, {"bdquo", 0x201E},  {"bull", 0x2022},  {"middot", 0xB7},
      {"euro", 0x20AC},  {"pound", 0xA3},    {"yen", 0xA5},     {"cent", 0xA2},
      {"sect", 0xA7},    {"para", 0xB6},     {"deg", 0xB0},     {"plusmn", 0xB1},
      {"times", 0xD7},   {"divide", 0xF7},   {"laquo", 0xAB},   {"raquo", 0xBB},
      {"iexcl", 0xA1},   {"iquest", 0xBF},   {"frac12", 0xBD},  {"frac14", 0xBC},
      {"frac34", 0xBE},  {"micro", 0xB5},    {"larr", 0x2190},  {"rarr", 0x2192},
      {"uarr", 0x2191},  {"darr", 0x2193},   {"harr", 0x2194},  {"rArr", 0x21D2},
      {"le", 0x2264},    {"ge", 0x2265},     {"ne", 0x2260},    {"infin", 0x221E},
      {"minus", 0x2212}, {"prime", 0x2032},  {"auml", 0xE4},    {"ouml", 0xF6},
      {"uuml", 0xFC},    {"Auml", 0xC4},     {"Ouml", 0xD6},    {"Uuml", 0xDC},
      {"szlig", 0xDF},   {"eacute", 0xE9},   {"egrave", 0xE8},  {"ecirc", 0xEA},
      {"Eacute", 0xC9},  {"agrave", 0xE0},   {"aacute", 0xE1},  {"acirc", 0xE2},
      {"ccedil", 0xE7},  {"ntilde", 0xF1},   {"oacute", 0xF3},  {"ocirc", 0xF4},
      {"iacute", 0xED},  {"uacute", 0xFA},   {"oslash", 0xF8},  {"aring", 0xE5},
      {"zwj", 0x200D},   {"zwnj", 0x200C}};
  return *table;
}

class HtmlExtractor {
 public:
  explicit HtmlExtractor(std::string_view s) : s_(s) {
    out_.reserve(s.size() / 2);
    last_gt_ = s.rfind('>');
    last_dquote_ = s.rfind('"');
    last_squote_ = s.rfind('\'');
  }

  std::string Run() {
    std::size_t i = 0;
    while (i < s_.size()) {
      const char c = s_[i];
      if (c == '<') {
        i = Tag(i);
      } else if (c == '&') {
        entity_.clear();
        const std::size_t used = DecodeEntity(s_, i, entity_);
        if (used == 0) {
          Put(std::string_view("&"));
          ++i;
        } else {
          Put(entity_);
          i += used;
        }
      } else if (IsSpace(c)) {
        if (pre_depth_ > 0) {
          if (c != '\r') Put(std::string_view(&c, 1));
        } else {
          pending_ = std::max(pending_, 1);
        }
        ++i;
      } else {
        Put(std::string_view(&s_[i], 1));
        ++i;
      }
    }
    return std::move(out_);
  }

 private:
  // 1 space, 2 line break, 3 paragraph break: the strongest break asked for since the last text.
  void Break(int level) { pending_ = std::max(pending_, level); }

  void Put(std::string_view text) {
    if (pending_ > 0 && !out_.empty()) out_ += pending_ == 1 ? " " : pending_ == 2 ? "\n" : "\n\n";
    pending_ = 0;
    out_ += text;
  }

  // Handles the markup starting at `i` ('<') and returns where the text resumes.
  std::size_t Tag(std::size_t i) {
    const std::size_t n = s_.size();
    if (s_.compare(i, 4, "<!--") == 0) {
      const auto end = s_.find("-->", i + 4);
      return end == std::string_view::npos ? n : end + 3;
    }
    const bool closing = i + 1 < n && s_[i + 1] == '/';
    std::size_t k = i + 1 + (closing ? 1 : 0);
    const std::size_t name_start = k;
    if (k < n && std::isalpha(static_cast<unsigned char>(s_[k]))) {  // a name starts with a letter
      while (k < n &&
             (std::isalnum(static_cast<unsigned char>(s_[k])) || s_[k] == '-' || s_[k] == ':')) {
        ++k;
      }
    }
    const bool markup = i + 1 < n && (s_[i + 1] == '!' || s_[i + 1] == '?' || closing);
    if (k == name_start && !markup) {  // "a < b", "<3": text
      Put(std::string_view("<"));
      return i + 1;
    }
    if (last_gt_ == std::string_view::npos || last_gt_ < i) return n;  // never closed: no text left
    // The tag's end: the first '>' outside a quoted attribute value. A quote opens a value only
    // right after '=' (so `<p it's>` ends at its '>'), and one never closed is ignored.
    std::size_t j = k;
    char before = 0;  // the last non-space character of the tag so far
    while (j < n && s_[j] != '>') {
      const char q = s_[j];
      if (before == '=' && ((q == '"' && j < last_dquote_) || (q == '\'' && j < last_squote_))) {
        j = s_.find(q, j + 1);
      }
      if (!IsSpace(s_[j])) before = s_[j];
      ++j;
    }
    const std::size_t end = j >= n ? n : j + 1;
    if (k == name_start) return end;  // <!DOCTYPE>, <?xml?>, </ >
    std::string name(s_.substr(name_start, k - name_start));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == "pre") {
      Break(3);
      pre_depth_ = closing ? std::max(0, pre_depth_ - 1) : pre_depth_ + 1;
    } else if (In(kParagraphTags, name)) {
      Break(3);
    } else if (In(kLineTags, name)) {
      Break(2);
    } else if (In(kCellTags, name)) {
      Break(1);
    } else if (!closing && In(kDroppedTags, name)) {
      return SkipContent(name, end);
    }
    return end;
  }

  // The position of the closing tag of a dropped element opened before `from`. A head also ends
  // where a body starts (a page that forgets </head> keeps its body). Unclosed scripts and styles
  // drop the rest (as a browser would); other unclosed elements keep their content.
  std::size_t SkipContent(const std::string& name, std::size_t from) {
    const std::string close = "</" + name;
    const bool is_head = name == "head";
    auto& failed = failed_closes_[name];
    if (!failed) {
      for (std::size_t p = s_.find('<', from); p != std::string_view::npos;
           p = s_.find('<', p + 1)) {
        if (StartsWithNoCase(s_, p, close) || (is_head && StartsWithNoCase(s_, p, "<body"))) {
          return p;
        }
      }
      failed = true;  // no closing tag after here, so none after any later position either
    }
    return name == "script" || name == "style" ? s_.size() : from;
  }

  std::string_view s_;
  std::string out_;
  std::string entity_;
  int pending_ = 0;
  int pre_depth_ = 0;
  std::size_t last_gt_, last_dquote_, last_squote_;
  std::unordered_map<std::string, bool> failed_closes_;
};

}  // namespace

std::size_t DecodeEntity(std::string_view s, std::size_t i, std::string& out) {
  std::size_t k = i + 1;
  if (k < s.size() && s[k] == '#') {
    ++k;
    const bool hex = k < s.size() && (s[k] == 'x' || s[k] == 'X');
    if (hex) ++k;
    const std::size_t digits_start = k;
    std::uint32_t value = 0;
    while (k < s.size() && k - digits_start < 8 &&
           (hex ? std::isxdigit(static_cast<unsigned char>(s[k]))
                : std::isdigit(static_cast<unsigned char>(s[k])))) {
      const char d = static_cast<char>(std::tolower(static_cast<unsigned char>(s[k])));
      value =
          value * (hex ? 16 : 10) + static_cast<std::uint32_t>(d <= '9' ? d - '0' : d - 'a' + 10);
      ++k;
    }
    if (k == digits_start) return 0;
    if (k < s.size() && s[k] == ';') ++k;
    AppendUtf8(out, value == 0 ? char32_t{0xFFFD} : static_cast<char32_t>(value));
    return k - i;
  }
  while (k < s.size() && k - i <= 8 && std::isalnum(static_cast<unsigned char>(s[k]))) ++k;
  if (k >= s.size() || s[k] != ';' || k == i + 1) return 0;
  const auto& table = NamedEntities();
  const auto it = table.find(s.substr(i + 1, k - i - 1));
  if (it == table.end()) return 0;
  if (it->second != 0xAD && it->second != 0x200D && it->second != 0x200C)
    AppendUtf8(out, it->second);
  return k + 1 - i;
}

util::Result<std::string> HtmlText(std::string_view bytes) { return HtmlExtractor(bytes).Run(); }

}  // namespace sb::knowledge::detail
