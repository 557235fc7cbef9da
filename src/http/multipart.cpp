#include "http/multipart.hpp"

#include <cctype>

namespace sb::http {
namespace {

using util::ErrorCode;

// The value of `name=` in a header's parameters: quoted (with \" escapes) or a token.
std::string Parameter(std::string_view header, std::string_view name) {
  for (std::size_t at = 0; (at = header.find(name, at)) != std::string_view::npos; ++at) {
    // A whole parameter name: at the start or after ';' or whitespace, followed by '='.
    const bool starts =
        at == 0 || header[at - 1] == ';' || header[at - 1] == ' ' || header[at - 1] == '\t';
    const std::size_t eq = at + name.size();
    if (!starts || eq >= header.size() || header[eq] != '=') continue;
    std::size_t i = eq + 1;
    std::string value;
    if (i < header.size() && header[i] == '"') {
      for (++i; i < header.size() && header[i] != '"'; ++i) {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        value += header[i];
      }
    } else {
      while (i < header.size() && header[i] != ';' && header[i] != '\r' && header[i] != '\n') {
        value += header[i++];
      }
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
    }
    return value;
  }
  return {};
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// RFC 5987 `UTF-8''name%20with%20spaces` -> the name; "" when not that form.
std::string ExtendedValue(std::string_view value) {
  const auto quote = value.find("''");
  if (quote == std::string_view::npos) return {};
  std::string charset(value.substr(0, quote));
  for (auto& c : charset) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (charset != "utf-8") return {};
  std::string out;
  for (std::size_t i = quote + 2; i < value.size(); ++i) {
    if (value[i] == '%' && i + 2 < value.size() && HexValue(value[i + 1]) >= 0 &&
        HexValue(value[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(value[i + 1]) * 16 + HexValue(value[i + 2]));
      i += 2;
    } else {
      out += value[i];
    }
  }
  return out;
}

}  // namespace

util::Result<FormFile> UploadedFile(const Request& req) {
  const std::string_view type = req.Header("content-type");
  if (type.find("multipart/form-data") == std::string_view::npos) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      "send the file as multipart/form-data in a part named \"file\"");
  }
  std::string boundary = Parameter(type, "boundary");
  if (boundary.empty() || boundary.size() > 200) {
    return util::Fail(ErrorCode::kInvalidArgument, "multipart body without a boundary");
  }
  const std::string delimiter = "--" + boundary;
  const std::string next_delimiter = "\r\n" + delimiter;
  const std::string_view body = req.body;
  std::size_t pos = body.find(delimiter);
  while (pos != std::string_view::npos) {
    pos += delimiter.size();
    if (body.substr(pos, 2) == "--") break;  // the closing delimiter
    const auto headers_end = body.find("\r\n\r\n", pos);
    if (headers_end == std::string_view::npos) break;
    const std::string_view headers = body.substr(pos, headers_end - pos);
    const auto data_start = headers_end + 4;
    const auto next = body.find(next_delimiter, data_start);
    if (next == std::string_view::npos) break;
    std::string filename = ExtendedValue(Parameter(headers, "filename*"));
    if (filename.empty()) filename = Parameter(headers, "filename");
    const bool has_filename = headers.find("filename") != std::string_view::npos;
    if (has_filename || Parameter(headers, "name") == "file") {
      return FormFile{std::move(filename), body.substr(data_start, next - data_start)};
    }
    pos = next + 2;
  }
  return util::Fail(ErrorCode::kInvalidArgument, "the multipart body has no file part");
}

}  // namespace sb::http
