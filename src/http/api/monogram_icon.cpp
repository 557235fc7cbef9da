#include "http/api/monogram_icon.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>

#include "util/markup.hpp"
#include "util/utf8.hpp"

namespace sb::http::api {
namespace {

bool IsAsciiAlnum(char32_t cp) {
  return cp < 0x80 && std::isalnum(static_cast<unsigned char>(cp)) != 0;
}

// FNV-1a: a stable colour per name across builds and machines.
std::uint32_t Fnv1a(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

std::string LabelOf(const domain::CatalogueEntry& entry) {
  const auto* label = entry.descriptor.if_contains("label");
  if (label && label->is_object()) {
    if (const auto* en = label->as_object().if_contains("en_US"); en && en->is_string()) {
      return std::string(en->as_string());
    }
  }
  if (label && label->is_string()) return std::string(label->as_string());
  return entry.name;
}

}  // namespace

std::string MonogramText(std::string_view label, std::string_view name) {
  const std::string text = util::ToValidUtf8(label);
  std::string initials;
  int words = 0;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size() && words < 2;) {
    char32_t cp = 0;
    const std::size_t n = util::NextCodePoint(text, i, cp);
    const bool letter = IsAsciiAlnum(cp) || cp >= 0x80;
    if (letter && !in_word) {
      ++words;
      util::AppendUtf8(
          initials,
          cp < 0x80 ? static_cast<char32_t>(std::toupper(static_cast<unsigned char>(cp))) : cp);
    }
    in_word = letter;
    i += n;
  }
  if (words == 1 && text.size() > 1) {
    // One word: its first two characters ("Telegram" -> "TE"), for a fuller square.
    initials.clear();
    int taken = 0;
    for (std::size_t i = 0; i < text.size() && taken < 2;) {
      char32_t cp = 0;
      const std::size_t n = util::NextCodePoint(text, i, cp);
      if (IsAsciiAlnum(cp) || cp >= 0x80) {
        util::AppendUtf8(
            initials,
            cp < 0x80 ? static_cast<char32_t>(std::toupper(static_cast<unsigned char>(cp))) : cp);
        ++taken;
      }
      i += n;
    }
  }
  if (initials.empty() && !name.empty()) return MonogramText(name, {});
  return initials.empty() ? "?" : initials;
}

std::string MonogramSvg(std::string_view label, std::string_view name) {
  const int hue = static_cast<int>(Fnv1a(name) % 360);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"64\" height=\"64\" viewBox=\"0 0 64 64\" "
      "role=\"img\"><title>");
  svg += util::EscapeMarkup(util::ToValidUtf8(label));
  svg += fmt::format(
      "</title><rect width=\"64\" height=\"64\" rx=\"14\" fill=\"hsl({}, 55%, 42%)\"/>"
      "<text x=\"32\" y=\"33\" text-anchor=\"middle\" dominant-baseline=\"central\" "
      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"26\" font-weight=\"700\" "
      "fill=\"#ffffff\">",
      hue);
  svg += util::EscapeMarkup(MonogramText(label, name));
  svg += "</text></svg>";
  return svg;
}

Response MonogramResponse(const domain::CatalogueEntry& entry) {
  Response r;
  r.body = MonogramSvg(LabelOf(entry), entry.name);
  r.content_type = "image/svg+xml";
  r.headers.emplace_back("Cache-Control", "public, max-age=86400");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; style-src 'unsafe-inline'");
  return r;
}

}  // namespace sb::http::api
