#include "mcp/jsonrpc.hpp"

#include <array>

namespace sb::mcp {

namespace {

Message Invalid(std::string reason) {
  Message m;
  m.invalid_reason = std::move(reason);
  return m;
}

std::string Cut(std::string_view text, std::size_t max) { return std::string(text.substr(0, max)); }

}  // namespace

bool SupportedProtocolVersion(std::string_view version) {
  static constexpr std::array<std::string_view, 3> kKnown = {"2025-06-18", "2025-03-26",
                                                             "2024-11-05"};
  for (auto v : kKnown) {
    if (v == version) return true;
  }
  return false;
}

std::string BuildRequest(std::int64_t id, std::string_view method, util::JsonObject params) {
  return util::SerializeJson(util::JsonObject{
      {"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
}

std::string BuildNotification(std::string_view method, util::JsonObject params) {
  util::JsonObject o{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.empty()) o["params"] = std::move(params);
  return util::SerializeJson(o);
}

std::string BuildResult(const util::Json& id, util::JsonObject result) {
  return util::SerializeJson(
      util::JsonObject{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

std::string BuildError(const util::Json& id, int code, std::string_view message) {
  return util::SerializeJson(
      util::JsonObject{{"jsonrpc", "2.0"},
                       {"id", id},
                       {"error", util::JsonObject{{"code", code}, {"message", message}}}});
}

Message ParseMessage(std::string_view text) {
  auto parsed = util::ParseJson(text);
  if (!parsed) return Invalid("not JSON");
  if (!parsed->is_object()) return Invalid("not a JSON-RPC object (batches are not accepted)");
  auto& o = parsed->as_object();
  auto version = o.find("jsonrpc");
  if (version == o.end() || !version->value().is_string() ||
      version->value().as_string() != "2.0") {
    return Invalid("jsonrpc is not \"2.0\"");
  }
  Message m;
  if (auto id = o.find("id"); id != o.end()) {
    if (!id->value().is_int64() && !id->value().is_uint64() && !id->value().is_string()) {
      return Invalid("id is neither a number nor a string");
    }
    m.id = id->value();
    if (id->value().is_int64()) m.int_id = id->value().as_int64();
    if (id->value().is_uint64() && id->value().as_uint64() < (1ULL << 62)) {
      m.int_id = static_cast<std::int64_t>(id->value().as_uint64());
    }
  }
  if (auto method = o.find("method"); method != o.end()) {
    if (!method->value().is_string()) return Invalid("method is not a string");
    m.method = Cut(method->value().as_string(), 200);
    if (auto p = o.find("params"); p != o.end()) m.params = p->value();
    m.kind = m.id.is_null() ? Message::Kind::kNotification : Message::Kind::kRequest;
    return m;
  }
  if (m.id.is_null()) return Invalid("neither a method nor an id");
  auto result = o.find("result");
  auto error = o.find("error");
  if ((result == o.end()) == (error == o.end())) {
    return Invalid("a response needs exactly one of result and error");
  }
  m.kind = Message::Kind::kResponse;
  if (result != o.end()) {
    m.result = result->value();
    return m;
  }
  if (!error->value().is_object()) return Invalid("error is not an object");
  const auto& e = error->value().as_object();
  m.is_error = true;
  if (auto c = e.find("code"); c != e.end() && c->value().is_int64()) {
    m.error_code = static_cast<int>(c->value().as_int64());
  }
  if (auto msg = e.find("message"); msg != e.end() && msg->value().is_string()) {
    m.error_message = Cut(msg->value().as_string(), 300);
  }
  return m;
}

}  // namespace sb::mcp
