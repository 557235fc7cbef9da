#include "util/json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/stream_parser.hpp>
#include <cmath>
#include <iterator>

namespace sb::util {

Result<Json> ParseJson(std::string_view text) {
  boost::json::parse_options opts;
  opts.max_depth = 64;
  boost::json::stream_parser parser({}, opts);
  boost::system::error_code ec;
  const std::size_t used = parser.write(text.data(), text.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("malformed JSON at offset {}: {}", used, ec.message()));
  }
  return parser.release();
}

namespace {

void AppendEscaped(std::string& out, std::string_view text) {
  out.push_back('"');
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        } else {
          out.push_back(ch);  // UTF-8 passes through; the parser already validated it
        }
    }
  }
  out.push_back('"');
}

void Append(std::string& out, const Json& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      out += "null";
      return;
    case boost::json::kind::bool_:
      out += v.get_bool() ? "true" : "false";
      return;
    case boost::json::kind::int64:
      fmt::format_to(std::back_inserter(out), "{}", v.get_int64());
      return;
    case boost::json::kind::uint64:
      fmt::format_to(std::back_inserter(out), "{}", v.get_uint64());
      return;
    case boost::json::kind::double_: {
      const double d = v.get_double();
      if (!std::isfinite(d)) {
        out += "null";  // JSON has no NaN or infinity
      } else {
        // Shortest form that reads back the same ("1.5", "0.0"), not Boost's "1.5E0".
        const auto start = out.size();
        fmt::format_to(std::back_inserter(out), "{}", d);
        if (out.find_first_of(".eE", start) == std::string::npos) out += ".0";
      }
      return;
    }
    case boost::json::kind::string:
      AppendEscaped(out, v.get_string());
      return;
    case boost::json::kind::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& e : v.get_array()) {
        if (!first) out.push_back(',');
        first = false;
        Append(out, e);
      }
      out.push_back(']');
      return;
    }
    case boost::json::kind::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, value] : v.get_object()) {
        if (!first) out.push_back(',');
        first = false;
        AppendEscaped(out, key);
        out.push_back(':');
        Append(out, value);
      }
      out.push_back('}');
      return;
    }
  }
}

}  // namespace

std::string SerializeJson(const Json& value) {
  std::string out;
  out.reserve(256);
  Append(out, value);
  return out;
}

void AppendJson(std::string& out, const Json& value) { Append(out, value); }

void DeepMerge(JsonObject& base, const JsonObject& overlay) {
  for (const auto& [key, value] : overlay) {
    auto it = base.find(key);
    if (it != base.end() && it->value().is_object() && value.is_object()) {
      DeepMerge(it->value().as_object(), value.as_object());
    } else {
      base[key] = value;
    }
  }
}

const char* JsonKindName(const Json& value) {
  switch (value.kind()) {
    case boost::json::kind::null:
      return "null";
    case boost::json::kind::bool_:
      return "boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
      return "integer";
    case boost::json::kind::double_:
      return "number";
    case boost::json::kind::string:
      return "string";
    case boost::json::kind::array:
      return "array";
    case boost::json::kind::object:
      return "object";
  }
  return "value";
}

}  // namespace sb::util
