#include "platforms/common/wechat_callback.hpp"

#include <charconv>
#include <pugixml.hpp>

#include "platforms/common/wechat_crypto.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::common {
namespace {

using util::ErrorCode;

// All text below `node`, in document order (CDATA and plain text alike).
void AppendText(const pugi::xml_node& node, std::string& out) {
  for (const pugi::xml_node& child : node.children()) {
    if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) {
      out.append(child.value());
    } else if (child.type() == pugi::node_element) {
      AppendText(child, out);
    }
  }
}

}  // namespace

WeChatQuery ReadWeChatQuery(const domain::PlatformCall& call) {
  WeChatQuery query;
  for (const auto& [name, value] : call.query) {
    std::string* slot = name == "msg_signature"  ? &query.msg_signature
                        : name == "signature"    ? &query.signature
                        : name == "timestamp"    ? &query.timestamp
                        : name == "nonce"        ? &query.nonce
                        : name == "echostr"      ? &query.echostr
                        : name == "encrypt_type" ? &query.encrypt_type
                        : name == "openid"       ? &query.openid
                                                 : nullptr;
    if (slot != nullptr && slot->empty()) *slot = value;
  }
  return query;
}

util::Result<WeChatFields> ParseWeChatXml(std::string_view xml) {
  if (xml.size() > kMaxWeChatXmlBytes) {
    return util::Fail(ErrorCode::kInvalidArgument, "the XML body is too large");
  }
  pugi::xml_document doc;
  // parse_default expands only the five predefined entities and never loads a DTD; a DOCTYPE is
  // refused outright below since no callback has one.
  const unsigned options = pugi::parse_default | pugi::parse_doctype;
  const pugi::xml_parse_result parsed =
      doc.load_buffer(xml.data(), xml.size(), options, pugi::encoding_utf8);
  if (!parsed) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      std::string("malformed XML: ") + parsed.description());
  }
  pugi::xml_node root;
  for (const pugi::xml_node& node : doc.children()) {
    if (node.type() == pugi::node_doctype) {
      return util::Fail(ErrorCode::kInvalidArgument, "a DOCTYPE is not accepted");
    }
    if (node.type() == pugi::node_element) {
      if (root) return util::Fail(ErrorCode::kInvalidArgument, "more than one root element");
      root = node;
    }
  }
  if (!root || std::string_view(root.name()) != "xml") {
    return util::Fail(ErrorCode::kInvalidArgument, "the root element is not <xml>");
  }
  WeChatFields fields;
  for (const pugi::xml_node& child : root.children()) {
    if (child.type() != pugi::node_element) continue;
    std::string text;
    AppendText(child, text);
    fields.emplace(child.name(), std::move(text));  // a repeated child keeps its first value
  }
  return fields;
}

std::string BuildWeChatXml(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out = "<xml>";
  for (const auto& [name, value] : fields) {
    out += '<';
    out += name;
    out += "><![CDATA[";
    // "]]>" would end the section: close it after "]]" and open a new one for ">".
    std::string_view rest = value;
    for (std::size_t at; (at = rest.find("]]>")) != std::string_view::npos;) {
      out.append(rest.substr(0, at + 2));
      out += "]]><![CDATA[";
      rest.remove_prefix(at + 2);
    }
    out.append(rest);
    out += "]]></";
    out += name;
    out += '>';
  }
  out += "</xml>";
  return out;
}

std::string_view FieldOr(const WeChatFields& fields, std::string_view name) {
  auto it = fields.find(name);
  return it == fields.end() ? std::string_view() : std::string_view(it->second);
}

util::Result<std::string> WeChatEchoFromVerify(const WeChatEndpoint& endpoint,
                                               const WeChatQuery& query) {
  if (query.echostr.empty()) return util::Fail(ErrorCode::kInvalidArgument, "echostr is missing");
  if (auto ok = WeChatVerifySignature(endpoint.token, query.timestamp, query.nonce, query.echostr,
                                      query.msg_signature);
      !ok) {
    return tl::unexpected(ok.error());
  }
  return WeChatDecrypt(endpoint.aes_key, query.echostr, endpoint.receive_id);
}

util::Result<WeChatFields> OpenWeChatXml(const WeChatEndpoint& endpoint, const WeChatQuery& query,
                                         std::string_view body) {
  auto outer = ParseWeChatXml(body);
  if (!outer) return outer;
  const std::string_view encrypt = FieldOr(*outer, "Encrypt");
  if (encrypt.empty()) return util::Fail(ErrorCode::kInvalidArgument, "<Encrypt> is missing");
  if (auto ok = WeChatVerifySignature(endpoint.token, query.timestamp, query.nonce, encrypt,
                                      query.msg_signature);
      !ok) {
    return tl::unexpected(ok.error());
  }
  auto inner = WeChatDecrypt(endpoint.aes_key, encrypt, endpoint.receive_id);
  if (!inner) return tl::unexpected(inner.error());
  return ParseWeChatXml(*inner);
}

util::Result<std::string> SealWeChatXml(const WeChatEndpoint& endpoint, std::string_view inner_xml,
                                        std::string_view timestamp, std::string_view nonce,
                                        std::string_view random16) {
  auto encrypt = WeChatEncrypt(endpoint.aes_key, inner_xml, endpoint.receive_id, random16);
  if (!encrypt) return encrypt;
  return BuildWeChatXml(
      {{"Encrypt", *encrypt},
       {"MsgSignature", WeChatSignature(endpoint.token, timestamp, nonce, *encrypt)},
       {"TimeStamp", std::string(timestamp)},
       {"Nonce", std::string(nonce)}});
}

util::Result<std::string> SealWeChatXml(const WeChatEndpoint& endpoint, std::string_view inner_xml,
                                        std::string_view timestamp, std::string_view nonce) {
  std::string random(16, '\0');
  util::RandomBytes(reinterpret_cast<unsigned char*>(random.data()), random.size());
  return SealWeChatXml(endpoint, inner_xml, timestamp, nonce, random);
}

bool WeChatTimestampFresh(std::string_view timestamp, util::TimePoint now,
                          std::chrono::seconds window) {
  std::int64_t seconds = 0;
  const auto [end, ec] =
      std::from_chars(timestamp.data(), timestamp.data() + timestamp.size(), seconds);
  if (ec != std::errc() || end != timestamp.data() + timestamp.size() || timestamp.empty()) {
    return false;
  }
  const std::int64_t delta = util::ToUnixSeconds(now) - seconds;
  return delta <= window.count() && -delta <= window.count();
}

}  // namespace sb::platforms::common
