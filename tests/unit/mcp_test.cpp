// The MCP client's I/O-free parts: JSON-RPC messages as MCP servers send them (from the
// specification's examples and from hostile input), tool lists and tool results, the mapping of
// LangBot's extra_args to transport settings, and the service's masking rules.
#include <gtest/gtest.h>

#include "mcp/http_session.hpp"
#include "mcp/jsonrpc.hpp"
#include "mcp/server_config.hpp"
#include "services/mcp_service.hpp"

namespace sb::mcp {
namespace {

using Kind = Message::Kind;

TEST(JsonRpc, BuildsRequestsAndNotifications) {
  auto req = util::ParseJson(BuildRequest(7, "tools/list", util::JsonObject{{"cursor", "2"}}));
  ASSERT_TRUE(req);
  EXPECT_EQ(req->at("jsonrpc"), "2.0");
  EXPECT_EQ(req->at("id"), 7);
  EXPECT_EQ(req->at("method"), "tools/list");
  EXPECT_EQ(req->at("params").at("cursor"), "2");
  auto note = util::ParseJson(BuildNotification("notifications/initialized", {}));
  ASSERT_TRUE(note);
  EXPECT_FALSE(note->as_object().contains("id"));
  EXPECT_FALSE(note->as_object().contains("params"));
}

TEST(JsonRpc, ReadsResponsesRequestsAndNotifications) {
  auto ok = ParseMessage(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})");
  EXPECT_EQ(ok.kind, Kind::kResponse);
  EXPECT_EQ(ok.int_id, 1);
  EXPECT_FALSE(ok.is_error);
  auto err = ParseMessage(
      R"({"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: x"}})");
  EXPECT_EQ(err.kind, Kind::kResponse);
  EXPECT_TRUE(err.is_error);
  EXPECT_EQ(err.error_code, -32602);
  EXPECT_EQ(err.error_message, "Unknown tool: x");
  auto ping = ParseMessage(R"({"jsonrpc":"2.0","id":"abc","method":"ping"})");
  EXPECT_EQ(ping.kind, Kind::kRequest);
  EXPECT_FALSE(ping.int_id);
  auto changed = ParseMessage(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  EXPECT_EQ(changed.kind, Kind::kNotification);
}

TEST(JsonRpc, RefusesWhatIsNotJsonRpc) {
  for (const char* bad :
       {"", "not json", "[]", R"({"hello":1})", R"({"jsonrpc":"1.0","id":1})",
        R"({"jsonrpc":"2.0","id":1})", R"({"jsonrpc":"2.0","id":1,"result":1,"error":{}})",
        R"({"jsonrpc":"2.0","id":{},"result":1})", R"({"jsonrpc":"2.0","id":1,"error":"x"})",
        R"({"jsonrpc":"2.0","method":5})"}) {
    auto m = ParseMessage(bad);
    EXPECT_EQ(m.kind, Kind::kInvalid) << bad;
    EXPECT_FALSE(m.invalid_reason.empty()) << bad;
  }
  std::string huge_message(10000, 'x');
  auto m = ParseMessage(R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":")" + huge_message +
                        "\"}}");
  EXPECT_LE(m.error_message.size(), 300u);
}

TEST(JsonRpc, ProtocolVersions) {
  EXPECT_TRUE(SupportedProtocolVersion("2025-06-18"));
  EXPECT_TRUE(SupportedProtocolVersion("2025-03-26"));
  EXPECT_TRUE(SupportedProtocolVersion("2024-11-05"));
  EXPECT_FALSE(SupportedProtocolVersion("2099-01-01"));
  EXPECT_FALSE(SupportedProtocolVersion(""));
}

TEST(Tools, ListSkipsMalformedEntries) {
  auto page = util::ParseJson(R"({"tools":[
    {"name":"add","description":"Adds","inputSchema":{"type":"object","properties":{}}},
    {"description":"no name"}, 5, {"name":""},
    {"name":"bare"}]})");
  ASSERT_TRUE(page);
  auto tools = ToolsFromJson(*page);
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0].name, "add");
  EXPECT_EQ(tools[1].name, "bare");
  EXPECT_EQ(tools[1].input_schema.at("type"), "object");
  EXPECT_TRUE(ToolsFromJson(util::Json(nullptr)).empty());
}

TEST(Tools, ResultTextIsJoinedAndCapped) {
  auto r = util::ParseJson(R"({"content":[{"type":"text","text":"a"},{"type":"image","data":"x"},
    {"type":"text","text":"b"}],"isError":true})");
  ASSERT_TRUE(r);
  auto res = ToolResultFromJson(*r, 1000);
  EXPECT_EQ(res.text, "a\n[image content]\nb");
  EXPECT_TRUE(res.is_error);
  EXPECT_EQ(ToolResultFromJson(*r, 3).text, "a\n[");
  auto structured = util::ParseJson(R"({"content":[],"structuredContent":{"sum":3}})");
  EXPECT_EQ(ToolResultFromJson(*structured, 100).text, R"({"sum":3})");
}

TEST(ServerConfig, HttpTargetFromLangBotExtraArgs) {
  domain::McpServer s;
  s.mode = "http";
  s.extra_args = util::ParseJson(
                     R"({"url":"http://h/mcp","headers":{"Authorization":"Bearer t","X":1},
                         "timeout":2.5})")
                     ->as_object();
  auto t = HttpTargetOf(s);
  EXPECT_EQ(t.url, "http://h/mcp");
  ASSERT_EQ(t.headers.size(), 1u);
  EXPECT_EQ(t.headers[0].second, "Bearer t");
  EXPECT_EQ(t.timeout, std::chrono::milliseconds(2500));
}

TEST(McpSecrets, MaskedValuesComeBackAsTheStoredOnes) {
  auto stored = util::ParseJson(R"({"command":"x","env":{"TOKEN":"ghp_0123456789abcdef",
                                    "SHORT":"abc"}})")
                    ->as_object();
  auto masked = services::MaskMcpSecrets(stored);
  EXPECT_EQ(masked.at("env").at("TOKEN"), "ghp_...cdef");
  EXPECT_EQ(masked.at("env").at("SHORT"), "****");
  auto incoming = masked;
  incoming["env"].as_object()["SHORT"] = "new";
  auto kept = services::KeepMaskedMcpSecrets(incoming, stored);
  EXPECT_EQ(kept.at("env").at("TOKEN"), "ghp_0123456789abcdef");
  EXPECT_EQ(kept.at("env").at("SHORT"), "new");
  // A mask under another key is not a secret of that key.
  util::JsonObject moved{{"env", util::JsonObject{{"OTHER", "ghp_...cdef"}}}};
  EXPECT_EQ(services::KeepMaskedMcpSecrets(moved, stored).at("env").at("OTHER"), "ghp_...cdef");
}

}  // namespace
}  // namespace sb::mcp
