// The outbound half of the Lark codec: what can be sent, and the im/v1 message contents and
// upload bodies that send it.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "platforms/common/chain_builder.hpp"
#include "platforms/common/text_units.hpp"
#include "platforms/lark/lark_codec.hpp"
#include "util/crypto.hpp"

namespace sb::platforms::lark {
namespace {

using common::Invalid;
using domain::ElementType;
using domain::MessageElement;
using util::JsonArray;
using util::JsonObject;

bool IsHttpUrl(std::string_view url) {
  return url.size() <= 2048 && (url.substr(0, 7) == "http://" || url.substr(0, 8) == "https://");
}

JsonObject TextTag(std::string_view text) {
  JsonObject tag;
  tag["tag"] = "text";
  tag["text"] = text;
  return tag;
}

JsonObject AtTag(std::string_view user_id) {
  JsonObject tag;
  tag["tag"] = "at";
  tag["user_id"] = user_id;
  return tag;
}

// A run of text and mentions as a post: one paragraph per line.
std::string PostContent(const std::vector<const MessageElement*>& run) {
  JsonArray paragraphs;
  JsonArray line;
  auto add_text = [&](std::string_view text) {
    std::size_t from = 0;
    for (;;) {
      const std::size_t nl = text.find('\n', from);
      const std::string_view piece =
          text.substr(from, nl == std::string_view::npos ? std::string_view::npos : nl - from);
      if (!piece.empty()) line.push_back(TextTag(piece));
      if (nl == std::string_view::npos) break;
      paragraphs.push_back(std::move(line));
      line = JsonArray();
      from = nl + 1;
    }
  };
  for (const MessageElement* e : run) {
    if (e->type == ElementType::kPlain) {
      add_text(e->text);
    } else {
      line.push_back(AtTag(e->type == ElementType::kAtAll ? "all" : e->target));
    }
  }
  if (!line.empty()) paragraphs.push_back(std::move(line));
  JsonObject body;
  body["title"] = "";
  body["content"] = std::move(paragraphs);
  JsonObject post;
  post["zh_cn"] = std::move(body);
  return util::SerializeJson(post);
}

std::string TextContent(std::string_view text) {
  JsonObject content;
  content["text"] = text;
  return util::SerializeJson(content);
}

}  // namespace

util::Result<void> CheckDeliverable(const domain::OutgoingMessage& message) {
  if (message.target_id.empty() || message.target_id.size() > kMaxIdBytes) {
    return Invalid("target_id must be a Lark open_id (person) or chat_id (group)");
  }
  bool shows_something = false;
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const MessageElement& e = message.chain[i];
    const std::string where = fmt::format("message_chain[{}]", i);
    switch (e.type) {
      case ElementType::kPlain:
        if (!e.text.empty()) shows_something = true;
        break;
      case ElementType::kAt:
        if (e.target.empty() || e.target.size() > kMaxIdBytes) {
          return Invalid(where + ": At needs a Lark open_id");
        }
        shows_something = true;
        break;
      case ElementType::kAtAll:
        shows_something = true;
        break;
      case ElementType::kImage:
        if (!e.base64.empty()) {
          if (!ImageBytes(e)) return Invalid(where + ": Image base64 does not decode");
        } else if (!IsHttpUrl(e.url)) {
          return Invalid(where + ": Image needs base64 or an http(s) url");
        }
        shows_something = true;
        break;
      case ElementType::kVoice:
        return Invalid(where + ": Voice cannot be sent to Lark by this server yet");
      case ElementType::kFile:
        if (!IsHttpUrl(e.url)) return Invalid(where + ": File needs an http(s) url");
        shows_something = true;
        break;
      case ElementType::kQuote:
      case ElementType::kSource:
        break;
    }
  }
  if (!shows_something) return Invalid("message_chain has nothing Lark can show");
  return util::Ok();
}

std::vector<OutgoingPart> EncodeOutgoing(const domain::OutgoingMessage& message) {
  std::vector<OutgoingPart> out;
  std::vector<const MessageElement*> run;
  std::vector<MessageElement> file_lines;  // owned text for File elements
  file_lines.reserve(message.chain.size());
  auto flush = [&]() {
    const bool has_mentions = std::any_of(run.begin(), run.end(), [](const MessageElement* e) {
      return e->type != ElementType::kPlain;
    });
    if (has_mentions) {
      out.push_back({"post", PostContent(run), std::nullopt});
    } else {
      std::string text;
      for (const MessageElement* e : run) text += e->text;
      for (auto& piece :
           common::SplitKeepingSeparator(text, kMaxTextCodePoints, common::TextUnit::kCodePoint)) {
        out.push_back({"text", TextContent(piece), std::nullopt});
      }
    }
    run.clear();
  };
  for (std::size_t i = 0; i < message.chain.size(); ++i) {
    const MessageElement& e = message.chain[i];
    switch (e.type) {
      case ElementType::kPlain:
      case ElementType::kAt:
      case ElementType::kAtAll:
        run.push_back(&e);
        break;
      case ElementType::kFile: {
        MessageElement line;
        line.text = fmt::format("{}{}", e.name.empty() ? "" : e.name + ": ", e.url);
        file_lines.push_back(std::move(line));
        run.push_back(&file_lines.back());
        break;
      }
      case ElementType::kImage:
        if (!run.empty()) flush();
        out.push_back({"image", "", i});
        break;
      default:
        break;
    }
  }
  if (!run.empty()) flush();
  // A run of only empty text sends nothing.
  out.erase(std::remove_if(out.begin(), out.end(),
                           [](const OutgoingPart& p) {
                             return p.msg_type == "text" && p.content == R"({"text":""})";
                           }),
            out.end());
  return out;
}

std::string ImageContent(std::string_view image_key) {
  JsonObject content;
  content["image_key"] = image_key;
  return util::SerializeJson(content);
}

std::string SendBody(std::string_view receive_id, const std::string& msg_type,
                     const std::string& content, std::string_view uuid) {
  JsonObject body;
  if (!receive_id.empty()) body["receive_id"] = receive_id;
  body["msg_type"] = msg_type;
  body["content"] = content;
  if (!uuid.empty()) body["uuid"] = uuid;
  return util::SerializeJson(body);
}

Multipart ImageUploadBody(std::string_view image_bytes, std::string_view boundary) {
  Multipart m;
  m.content_type = fmt::format("multipart/form-data; boundary={}", boundary);
  m.body = fmt::format(
      "--{0}\r\nContent-Disposition: form-data; name=\"image_type\"\r\n\r\nmessage\r\n"
      "--{0}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"image\"\r\n"
      "Content-Type: application/octet-stream\r\n\r\n",
      boundary);
  m.body.append(image_bytes);
  m.body += fmt::format("\r\n--{}--\r\n", boundary);
  return m;
}

util::Result<std::string> ImageBytes(const MessageElement& image) {
  std::string_view text = image.base64;
  if (text.substr(0, 5) == "data:") {
    const std::size_t comma = text.find(',');
    if (comma == std::string_view::npos) return Invalid("a data URL without a comma");
    text.remove_prefix(comma + 1);
  }
  std::string bytes;
  if (text.empty() || !util::Base64Decode(text, bytes) || bytes.empty()) {
    return Invalid("the image's base64 does not decode");
  }
  return bytes;
}

}  // namespace sb::platforms::lark
