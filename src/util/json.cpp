#include "util/json.hpp"

#include <fmt/format.h>

#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>

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

std::string SerializeJson(const Json& value) { return boost::json::serialize(value); }

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
