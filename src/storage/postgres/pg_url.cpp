#include "storage/postgres/pg_url.hpp"

#include <cctype>

namespace sb::storage::postgres {
namespace {

constexpr std::string_view kMask = "***";

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// Replaces the value of every `password=` parameter in a URL query (`&`-separated).
std::string MaskQueryPasswords(std::string_view query) {
  std::string out;
  std::size_t i = 0;
  while (i <= query.size()) {
    std::size_t end = query.find('&', i);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view part = query.substr(i, end - i);
    if (StartsWithNoCase(part, "password=")) {
      out.append("password=").append(kMask);
    } else {
      out.append(part);
    }
    if (end < query.size()) out.push_back('&');
    i = end + 1;
  }
  return out;
}

std::string MaskUrl(std::string_view url, std::size_t scheme_end) {
  const std::size_t authority_start = scheme_end + 3;
  std::size_t authority_end = url.find_first_of("/?", authority_start);
  if (authority_end == std::string_view::npos) authority_end = url.size();
  std::string out(url.substr(0, authority_start));
  const std::string_view authority = url.substr(authority_start, authority_end - authority_start);
  // The last '@' ends the user information: a password may itself hold '@' when unescaped.
  const std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    const std::string_view user_info = authority.substr(0, at);
    const std::size_t colon = user_info.find(':');
    if (colon != std::string_view::npos) {
      out.append(user_info.substr(0, colon + 1)).append(kMask);
    } else {
      out.append(user_info);
    }
    out.append(authority.substr(at));
  } else {
    out.append(authority);
  }
  const std::size_t query = url.find('?', authority_end);
  if (query == std::string_view::npos) {
    out.append(url.substr(authority_end));
  } else {
    out.append(url.substr(authority_end, query + 1 - authority_end));
    out.append(MaskQueryPasswords(url.substr(query + 1)));
  }
  return out;
}

// `key=value key='quoted value'`: the value of every password key is masked.
std::string MaskKeywordValue(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (StartsWithNoCase(text.substr(i), "password") &&
        (i == 0 || std::isspace(static_cast<unsigned char>(text[i - 1])))) {
      std::size_t j = i + 8;
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j < text.size() && text[j] == '=') {
        ++j;
        while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        std::size_t end = j;
        if (end < text.size() && text[end] == '\'') {
          ++end;
          while (end < text.size() && text[end] != '\'') end += text[end] == '\\' ? 2 : 1;
          end = std::min(end + 1, text.size());
        } else {
          while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
        }
        out.append(text.substr(i, j - i)).append(kMask);
        i = end;
        continue;
      }
    }
    out.push_back(text[i]);
    ++i;
  }
  return out;
}

}  // namespace

std::string MaskPassword(std::string_view url) {
  if (StartsWithNoCase(url, "postgresql://")) return MaskUrl(url, 10);
  if (StartsWithNoCase(url, "postgres://")) return MaskUrl(url, 8);
  if (url.find('=') != std::string_view::npos) return MaskKeywordValue(url);
  return std::string(url);
}

std::string PasswordOf(std::string_view url) {
  const std::string masked = MaskPassword(url);
  // The first place the masked text departs from the original is where the password starts; the
  // rest of both texts is identical, so its end follows from the common suffix.
  std::size_t start = 0;
  while (start < masked.size() && start < url.size() && masked[start] == url[start]) ++start;
  if (start == url.size()) return {};
  std::size_t url_end = url.size();
  std::size_t masked_end = masked.size();
  while (url_end > start && masked_end > start && url[url_end - 1] == masked[masked_end - 1]) {
    --url_end;
    --masked_end;
  }
  return std::string(url.substr(start, url_end - start));
}

std::string ScrubSecret(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  std::size_t at = 0;
  while ((at = text.find(secret, at)) != std::string::npos) {
    text.replace(at, secret.size(), kMask);
    at += kMask.size();
  }
  return text;
}

}  // namespace sb::storage::postgres
