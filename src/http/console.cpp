#include "http/console.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <system_error>
#include <utility>

#include "util/ascii.hpp"

namespace sb::http {
namespace {

constexpr std::string_view kNotBuilt =
    "the web console is not built into this binary: run `make build`";
constexpr std::string_view kIndex = "/index.html";
constexpr std::string_view kImmutable = "public, max-age=31536000, immutable";
constexpr std::string_view kNoCache = "no-cache";
constexpr std::string_view kText = "text/plain; charset=utf-8";
// A development directory is for a person's own files; this only keeps a mistake from eating
// the server's memory.
constexpr std::uintmax_t kMaxDirectoryFileBytes = 64u << 20;

constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob: https:; connect-src 'self'; font-src 'self' data:; "
    "object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'";

// Paths that belong to the API and the platforms, never to the console, even when no route
// matches them: a client there expects JSON, not a page.
bool IsReserved(std::string_view path) {
  auto at_or_below = [path](std::string_view prefix) {
    return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
  };
  return at_or_below("/api") || path.starts_with("/bots/") || at_or_below("/healthz") ||
         at_or_below("/readyz") || at_or_below("/metrics");
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls `each` with every comma-separated element of a header list, trimmed, empties skipped.
template <typename F>
void ForEachElement(std::string_view list, F each) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view element = Trim(list.substr(0, comma));
    if (!element.empty()) each(element);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

// A qvalue (RFC 9110 §12.4.2); a malformed one counts as 1 like an absent one would.
double ParseQ(std::string_view params) {
  double q = 1.0;
  while (!params.empty()) {
    const size_t semi = params.find(';');
    const std::string_view param = Trim(params.substr(0, semi));
    if (param.size() > 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
      std::string value(param.substr(2));
      char* end = nullptr;
      const double parsed = std::strtod(value.c_str(), &end);
      if (end != value.c_str()) q = std::clamp(parsed, 0.0, 1.0);
    }
    if (semi == std::string_view::npos) break;
    params.remove_prefix(semi + 1);
  }
  return q;
}

// The qvalue of each coding the console has, from an Accept-Encoding header (RFC 9110 §12.5.3).
// Without the header only identity is sent: a client that did not ask may not decode.
std::array<double, 3> Acceptance(const Request& request) {
  const auto index = [](Coding c) { return static_cast<size_t>(c); };
  std::array<double, 3> q = {1.0, 0.0, 0.0};
  std::array<bool, 3> listed = {false, false, false};
  std::optional<double> star;
  for (const auto& [name, value] : request.headers) {
    if (name != "accept-encoding") continue;
    ForEachElement(value, [&](std::string_view element) {
      const size_t semi = element.find(';');
      const std::string_view coding = Trim(element.substr(0, semi));
      const double quality =
          semi == std::string_view::npos ? 1.0 : ParseQ(element.substr(semi + 1));
      std::optional<Coding> which;
      if (util::EqualsIgnoreCase(coding, "br")) which = Coding::kBrotli;
      if (util::EqualsIgnoreCase(coding, "gzip") || util::EqualsIgnoreCase(coding, "x-gzip")) {
        which = Coding::kGzip;
      }
      if (util::EqualsIgnoreCase(coding, "identity")) which = Coding::kIdentity;
      if (coding == "*") star = quality;
      if (!which) return;
      q[index(*which)] = quality;
      listed[index(*which)] = true;
    });
  }
  if (star) {
    for (size_t i = 0; i < q.size(); ++i) {
      if (!listed[i]) q[i] = *star;
    }
  }
  return q;
}

// The variant to send: br, then gzip, then identity, the first the client accepts (q > 0).
// Identity when the client refuses everything (RFC 9110 §12.5.3 allows it; a 406 helps nobody).
const ConsoleVariant& PickVariant(const ConsoleFile& file, const Request& request) {
  const auto q = Acceptance(request);
  const ConsoleVariant* identity = &file.variants.front();
  const ConsoleVariant* best = nullptr;
  auto rank = [](Coding c) { return c == Coding::kBrotli ? 0 : c == Coding::kGzip ? 1 : 2; };
  for (const auto& v : file.variants) {
    if (v.coding == Coding::kIdentity) identity = &v;
    if (q[static_cast<size_t>(v.coding)] <= 0.0) continue;
    if (!best || rank(v.coding) < rank(best->coding)) best = &v;
  }
  return best ? *best : *identity;
}

// If-None-Match with the weak comparison of RFC 9110 §13.1.2.
bool NoneMatchHits(const Request& request, std::string_view etag) {
  bool hit = false;
  const auto opaque = [](std::string_view tag) {
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    return tag;
  };
  for (const auto& [name, value] : request.headers) {
    if (name != "if-none-match") continue;
    ForEachElement(value, [&](std::string_view tag) {
      if (tag == "*" || opaque(tag) == opaque(etag)) hit = true;
    });
  }
  return hit;
}

Response WithSecurityHeaders(Response r) {
  r.headers.emplace_back("Content-Security-Policy", kContentSecurityPolicy);
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  return r;
}

Response Text(int status, std::string_view text) {
  Response r;
  r.status = status;
  r.content_type = kText;
  r.body = text;
  r.headers.emplace_back("Cache-Control", kNoCache);
  return WithSecurityHeaders(std::move(r));
}

}  // namespace

std::string_view CodingName(Coding coding) {
  switch (coding) {
    case Coding::kGzip:
      return "gzip";
    case Coding::kBrotli:
      return "br";
    case Coding::kIdentity:
      break;
  }
  return "";
}

std::string_view ConsoleContentType(std::string_view path) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".webmanifest", "application/manifest+json"},
      {".txt", "text/plain; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".webp", "image/webp"},
      {".avif", "image/avif"},
      {".ico", "image/x-icon"},
      {".woff", "font/woff"},
      {".woff2", "font/woff2"},
      {".ttf", "font/ttf"},
      {".otf", "font/otf"},
      {".wasm", "application/wasm"},
      {".xml", "application/xml"},
  };
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  if (dot != std::string_view::npos && (slash == std::string_view::npos || dot > slash)) {
    const std::string_view ext = path.substr(dot);
    for (const auto& [suffix, type] : kTypes) {
      if (util::EqualsIgnoreCase(ext, suffix)) return type;
    }
  }
  return "application/octet-stream";
}

EmbeddedConsoleFiles::EmbeddedConsoleFiles(std::span<const EmbeddedConsoleFile> table) {
  for (const auto& f : table) {
    Entry e;
    e.content_type = ConsoleContentType(f.path);
    const std::string tag = f.etag;
    auto bytes = [](const unsigned char* p, std::size_t n) {
      return std::string_view(reinterpret_cast<const char*>(p), n);
    };
    e.variants.push_back({Coding::kIdentity, '"' + tag + '"', bytes(f.identity, f.identity_size)});
    if (f.gzip)
      e.variants.push_back({Coding::kGzip, '"' + tag + "-gz\"", bytes(f.gzip, f.gzip_size)});
    if (f.br) e.variants.push_back({Coding::kBrotli, '"' + tag + "-br\"", bytes(f.br, f.br_size)});
    files_.emplace(f.path, std::move(e));
  }
}

std::optional<ConsoleFile> EmbeddedConsoleFiles::Find(std::string_view path) const {
  const auto it = files_.find(path);
  if (it == files_.end()) return std::nullopt;
  return ConsoleFile{it->second.content_type, it->second.variants, nullptr};
}

std::string EmbeddedConsoleFiles::Unavailable() const {
  return files_.contains(kIndex) ? std::string() : std::string(kNotBuilt);
}

DirectoryConsoleFiles::DirectoryConsoleFiles(std::filesystem::path root) : root_(std::move(root)) {
  std::error_code ec;
  auto canonical = std::filesystem::canonical(root_, ec);
  root_ = ec ? std::filesystem::absolute(root_, ec).lexically_normal() : std::move(canonical);
}

std::optional<ConsoleFile> DirectoryConsoleFiles::Find(std::string_view path) const {
  if (!path.starts_with('/') || path.find('\0') != std::string_view::npos) return std::nullopt;
  std::filesystem::path relative;
  for (std::string_view rest = path.substr(1);;) {
    const size_t slash = rest.find('/');
    const std::string_view segment = rest.substr(0, slash);
    // ".", ".." and dotfiles alike; an empty segment ("//", a trailing '/') names no file, as
    // in the embedded table.
    if (segment.empty() || segment.starts_with('.')) return std::nullopt;
    relative /= std::string(segment);
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  std::error_code ec;
  // Symbolic links are followed, but the target must still lie under the root.
  const auto resolved = std::filesystem::canonical(root_ / relative, ec);
  if (ec) return std::nullopt;
  const auto inside = resolved.lexically_relative(root_);
  if (inside.empty() || *inside.begin() == "..") return std::nullopt;
  const auto status = std::filesystem::status(resolved, ec);
  if (ec || !std::filesystem::is_regular_file(status)) return std::nullopt;
  const auto size = std::filesystem::file_size(resolved, ec);
  if (ec || size > kMaxDirectoryFileBytes) return std::nullopt;
  const auto mtime = std::filesystem::last_write_time(resolved, ec);
  if (ec) return std::nullopt;

  std::ifstream in(resolved, std::ios::binary);
  if (!in) return std::nullopt;
  auto content = std::make_shared<std::string>(static_cast<size_t>(size), '\0');
  in.read(content->data(), static_cast<std::streamsize>(content->size()));
  content->resize(static_cast<size_t>(in.gcount()));

  char etag[64];
  std::snprintf(etag, sizeof etag, "\"%llx-%zx\"",
                static_cast<unsigned long long>(mtime.time_since_epoch().count()), content->size());
  ConsoleFile file;
  file.content_type = ConsoleContentType(path);
  file.variants.push_back({Coding::kIdentity, etag, *content});
  file.storage = std::move(content);
  return file;
}

std::string DirectoryConsoleFiles::Unavailable() const {
  std::error_code ec;
  if (std::filesystem::is_regular_file(root_ / "index.html", ec)) return {};
  return "the web console directory " + root_.string() + " has no index.html";
}

ConsoleHandler::ConsoleHandler(const ConsoleFiles& files) : files_(files) {}

std::optional<Response> ConsoleHandler::Handle(const Request& request) const {
  if (request.method != "GET" && request.method != "HEAD") return std::nullopt;
  const std::string_view path = request.path;
  if (!path.starts_with('/') || IsReserved(path)) return std::nullopt;
  if (auto why = files_.Unavailable(); !why.empty()) return Text(503, why + '\n');

  // "." and ".." segments and dotfiles name nothing the console has; no page for them either.
  if (path.find("/.") != std::string_view::npos) return Text(404, "not found\n");
  const bool root = path == "/";
  auto file = files_.Find(root ? kIndex : path);
  bool immutable = !root && files_.AssetsAreImmutable() && path.starts_with("/assets/");
  if (!file) {
    // A client-side route (no dot in its last segment) gets the app; a missing script, style
    // or image gets a plain 404, never a page the browser would try to run as one.
    const std::string_view last = path.substr(path.rfind('/') + 1);
    if (last.find('.') != std::string_view::npos) return Text(404, "not found\n");
    file = files_.Find(kIndex);
    if (!file) return Text(404, "not found\n");
    immutable = false;
  }

  const ConsoleVariant& variant = PickVariant(*file, request);
  Response r;
  r.headers.emplace_back("ETag", variant.etag);
  r.headers.emplace_back("Cache-Control", immutable ? kImmutable : kNoCache);
  r.headers.emplace_back("Vary", "Accept-Encoding");
  if (NoneMatchHits(request, variant.etag)) {
    r.status = 304;
    r.content_type.clear();
    return WithSecurityHeaders(std::move(r));
  }
  r.content_type = file->content_type;
  if (variant.coding != Coding::kIdentity) {
    r.headers.emplace_back("Content-Encoding", CodingName(variant.coding));
  }
  r.body = variant.bytes;
  return WithSecurityHeaders(std::move(r));
}

}  // namespace sb::http
