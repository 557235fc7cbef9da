#include "platforms/satori/satori_elements.hpp"

#include <cctype>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "domain/message_text.hpp"
#include "platforms/common/chain_builder.hpp"
#include "util/utf8.hpp"

namespace sb::platforms::satori {
namespace {

using domain::ElementType;
using domain::MessageChain;
using domain::MessageElement;

MessageElement Of(ElementType type) {
  MessageElement e;
  e.type = type;
  return e;
}

struct Attribute {
  std::string key;
  std::string value;  // unescaped; empty for a bare key
};

// One tag as written: `<name attrs>`, `<name attrs/>` or `</name>`.
struct Tag {
  std::string name;  // lower-cased
  std::vector<Attribute> attrs;
  bool closing = false;       // </name>
  bool self_closing = false;  // <name/>
  std::size_t end = 0;        // the offset just past '>'

  std::string Attr(std::string_view key) const {
    for (const Attribute& a : attrs) {
      if (a.key == key) return a.value;
    }
    return {};
  }
};

bool NameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
// Internal elements of an SDK are namespaced ("qq:face"), hence ':'.
bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == ':';
}
bool Space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

using util::AppendUtf8;

// A character reference's code point ("#39", "#x27"); nullopt when malformed or not a
// character (surrogates, beyond U+10FFFF, NUL).
std::optional<std::uint32_t> CharacterReference(std::string_view ref) {
  if (ref.size() < 2 || ref[0] != '#') return std::nullopt;
  const bool hex = ref[1] == 'x' || ref[1] == 'X';
  std::string_view digits = ref.substr(hex ? 2 : 1);
  if (digits.empty() || digits.size() > 8) return std::nullopt;
  std::uint32_t cp = 0;
  for (char c : digits) {
    int v = -1;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (hex && c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (hex && c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    }
    if (v < 0) return std::nullopt;
    cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(v);
    if (cp > 0x10FFFF) return std::nullopt;
  }
  if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  return cp;
}

// Parses the tag starting at content[at] == '<'; nullopt when it is no well-formed tag (then the
// '<' is text).
std::optional<Tag> ParseTag(std::string_view s, std::size_t at) {
  Tag tag;
  std::size_t i = at + 1;
  if (i < s.size() && s[i] == '/') {
    tag.closing = true;
    ++i;
  }
  if (i >= s.size() || !NameStart(s[i])) return std::nullopt;
  const std::size_t name_start = i;
  while (i < s.size() && NameChar(s[i])) ++i;
  for (char c : s.substr(name_start, i - name_start)) {
    tag.name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (;;) {
    while (i < s.size() && Space(s[i])) ++i;
    if (i >= s.size()) return std::nullopt;
    if (s[i] == '>') {
      tag.end = i + 1;
      return tag;
    }
    if (s[i] == '/') {
      if (i + 1 < s.size() && s[i + 1] == '>' && !tag.closing) {
        tag.self_closing = true;
        tag.end = i + 2;
        return tag;
      }
      return std::nullopt;
    }
    if (tag.closing) return std::nullopt;  // an end tag has no attributes
    const std::size_t key_start = i;
    while (i < s.size() && !Space(s[i]) && s[i] != '=' && s[i] != '>' && s[i] != '/' &&
           s[i] != '"' && s[i] != '\'' && s[i] != '<') {
      ++i;
    }
    if (i == key_start) return std::nullopt;
    Attribute attr{std::string(s.substr(key_start, i - key_start)), {}};
    std::size_t j = i;
    while (j < s.size() && Space(s[j])) ++j;
    if (j < s.size() && s[j] == '=') {
      ++j;
      while (j < s.size() && Space(s[j])) ++j;
      if (j >= s.size()) return std::nullopt;
      if (s[j] == '"' || s[j] == '\'') {
        const char quote = s[j];
        const std::size_t close = s.find(quote, j + 1);
        if (close == std::string_view::npos) return std::nullopt;
        attr.value = Unescape(s.substr(j + 1, close - j - 1));
        i = close + 1;
      } else {
        const std::size_t value_start = j;
        while (j < s.size() && !Space(s[j]) && s[j] != '>' && s[j] != '<' &&
               !(s[j] == '/' && j + 1 < s.size() && s[j + 1] == '>')) {
          ++j;
        }
        if (j == value_start) return std::nullopt;
        attr.value = Unescape(s.substr(value_start, j - value_start));
        i = j;
      }
    }
    tag.attrs.push_back(std::move(attr));
  }
}

// Elements whose content is not part of the message's text.
bool SkipsContent(std::string_view name) { return name == "quote" || name == "author"; }

class Decoder {
 public:
  MessageChain Run(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
      const std::size_t lt = s.find('<', i);
      Text(s.substr(i, lt == std::string_view::npos ? std::string_view::npos : lt - i));
      if (lt == std::string_view::npos) break;
      if (s.substr(lt, 4) == "<!--") {
        const std::size_t end = s.find("-->", lt + 4);
        i = end == std::string_view::npos ? s.size() : end + 3;
        continue;
      }
      auto tag = ParseTag(s, lt);
      if (!tag) {
        Text("<");
        i = lt + 1;
        continue;
      }
      Element(*tag);
      i = tag->end;
    }
    for (auto& e : chain_) {
      if (e.type == ElementType::kQuote) e = domain::MakeQuote(std::move(e.id), std::move(e.text));
    }
    return std::move(chain_);
  }

 private:
  void Text(std::string_view raw) {
    if (raw.empty()) return;
    if (skip_depth_ > 0) {
      // A <quote>'s children are the quoted message (its <author> is not): its text.
      if (quote_ && skip_depth_ == quote_depth_) {
        std::string& text = chain_[*quote_].text;
        if (text.size() <= domain::kMaxQuotedTextBytes) text += Unescape(raw);
      }
      return;
    }
    common::AppendPlain(chain_, Unescape(raw));
  }

  void Push(MessageElement element) {
    if (skip_depth_ == 0) chain_.push_back(std::move(element));
  }

  void LineBreak() {
    if (skip_depth_ > 0 || chain_.empty()) return;
    const MessageElement& last = chain_.back();
    if (last.type == ElementType::kPlain && !last.text.empty() && last.text.back() == '\n') return;
    common::AppendPlain(chain_, "\n");
  }

  void Element(const Tag& tag) {
    if (tag.closing) {
      // Only an end tag that closes an open element counts; a stray one is ignored.
      for (std::size_t k = open_.size(); k > 0; --k) {
        if (open_[k - 1] != tag.name) continue;
        for (std::size_t n = open_.size(); n >= k; --n) {
          if (SkipsContent(open_[n - 1])) --skip_depth_;
        }
        if (skip_depth_ < quote_depth_) quote_.reset();
        open_.resize(k - 1);
        if (tag.name == "p" || tag.name == "message") LineBreak();
        return;
      }
      return;
    }
    Open(tag);
    if (!tag.self_closing) {
      open_.push_back(tag.name);
      if (SkipsContent(tag.name)) ++skip_depth_;
    }
  }

  void Open(const Tag& tag) {
    const std::string& name = tag.name;
    if (name == "at") {
      const std::string type = tag.Attr("type");
      const std::string id = tag.Attr("id");
      if (type == "all" || type == "here") {
        Push(Of(ElementType::kAtAll));
      } else if (!id.empty()) {
        MessageElement at = Of(ElementType::kAt);
        at.target = id;
        Push(std::move(at));
      } else if (const std::string who = tag.Attr("name"); !who.empty()) {
        Text(Escape("@" + who));
      }
    } else if (name == "sharp") {
      std::string label = tag.Attr("name");
      if (label.empty()) label = tag.Attr("id");
      if (!label.empty()) Text(Escape("#" + label));
    } else if (name == "img" || name == "image" || name == "audio" || name == "record" ||
               name == "video" || name == "file") {
      std::string src = tag.Attr("src");
      if (src.empty()) src = tag.Attr("url");
      if (src.empty()) return;
      MessageElement media;
      if (name == "img" || name == "image") {
        media.type = ElementType::kImage;
      } else if (name == "audio" || name == "record") {
        media.type = ElementType::kVoice;
      } else {
        media.type = ElementType::kFile;
        media.name = tag.Attr("title");
        if (media.name.empty()) media.name = tag.Attr("name");
      }
      media.url = std::move(src);
      Push(std::move(media));
    } else if (name == "quote") {
      if (const std::string id = tag.Attr("id"); !id.empty() && skip_depth_ == 0) {
        MessageElement quote = Of(ElementType::kQuote);
        quote.id = id;
        Push(std::move(quote));
        if (!tag.self_closing) {
          quote_ = chain_.size() - 1;
          quote_depth_ = 1;  // Element() enters the quote right after this
        }
      }
    } else if (name == "br") {
      if (skip_depth_ == 0) common::AppendPlain(chain_, "\n");
    } else if (name == "p") {
      LineBreak();
    }
    // Everything else (styles, links, buttons, unknown and namespaced elements) only frames
    // its text, which the caller keeps.
  }

  MessageChain chain_;
  std::vector<std::string> open_;  // names of the elements open at this point
  int skip_depth_ = 0;             // open <quote>/<author> elements
  // The Quote whose children are being read (its index in chain_), at skip depth quote_depth_.
  std::optional<std::size_t> quote_;
  int quote_depth_ = 1;
};

// The MIME type of raw base64 bytes, from their first characters (magic numbers).
std::string_view SniffBase64(std::string_view b64, ElementType type) {
  if (b64.starts_with("iVBOR")) return "image/png";
  if (b64.starts_with("/9j/")) return "image/jpeg";
  if (b64.starts_with("R0lGOD")) return "image/gif";
  if (b64.starts_with("UklGR")) return type == ElementType::kImage ? "image/webp" : "audio/wav";
  if (b64.starts_with("SUQz") || b64.starts_with("//u") || b64.starts_with("//s")) {
    return "audio/mpeg";
  }
  if (b64.starts_with("T2dnUw")) return "audio/ogg";
  if (b64.starts_with("IyFBTVI")) return "audio/amr";
  return type == ElementType::kImage ? "image/png" : "application/octet-stream";
}

std::string MediaSource(const MessageElement& e) {
  if (!e.url.empty()) return e.url;
  if (e.base64.starts_with("data:")) return e.base64;
  return "data:" + std::string(SniffBase64(e.base64, e.type)) + ";base64," + e.base64;
}

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '&') {
      out += text[i++];
      continue;
    }
    const std::size_t semi = text.find(';', i + 1);
    if (semi == std::string_view::npos || semi - i > 12) {
      out += text[i++];
      continue;
    }
    const std::string_view ref = text.substr(i + 1, semi - i - 1);
    if (ref == "amp") {
      out += '&';
    } else if (ref == "lt") {
      out += '<';
    } else if (ref == "gt") {
      out += '>';
    } else if (ref == "quot") {
      out += '"';
    } else if (ref == "apos") {
      out += '\'';
    } else if (auto cp = CharacterReference(ref)) {
      AppendUtf8(out, static_cast<char32_t>(*cp));
    } else {
      out += text[i++];
      continue;
    }
    i = semi + 1;
  }
  return out;
}

domain::MessageChain DecodeContent(std::string_view content) { return Decoder().Run(content); }

std::string EncodeContent(const domain::MessageChain& chain) {
  std::string out;
  for (const MessageElement& e : chain) {
    switch (e.type) {
      case ElementType::kPlain:
        out += Escape(e.text);
        break;
      case ElementType::kAt:
        out += "<at id=\"" + Escape(e.target) + "\"/>";
        break;
      case ElementType::kAtAll:
        out += "<at type=\"all\"/>";
        break;
      case ElementType::kImage:
        out += "<img src=\"" + Escape(MediaSource(e)) + "\"/>";
        break;
      case ElementType::kVoice:
        out += "<audio src=\"" + Escape(MediaSource(e)) + "\"/>";
        break;
      case ElementType::kFile:
        out += "<file src=\"" + Escape(e.url) + "\"";
        if (!e.name.empty()) out += " title=\"" + Escape(e.name) + "\"";
        out += "/>";
        break;
      case ElementType::kQuote:
        if (!e.id.empty()) out += "<quote id=\"" + Escape(e.id) + "\"/>";
        break;
      case ElementType::kSource:
        break;
    }
  }
  return out;
}

}  // namespace sb::platforms::satori
