// The message chain as JSON, in LangBot's element shapes ({"type":"Plain","text":...},
// {"type":"At","target":...}, ...): the one codec for the HTTP API's send_message, the webhook
// adapter, the console's debug chat and plugins.
//   auto chain = DecodeMessageChain(body, "message_chain");  // errors name "message_chain[2].url"
//   util::JsonArray wire = EncodeMessageChain(reply);
#pragma once

#include <cstddef>
#include <limits>
#include <string_view>

#include "domain/message.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::domain {

// Bounds on what a stranger may send, so one request cannot make us hold or log unbounded
// strings. base64 payloads are bounded only by the request's own size cap.
struct ChainBounds {
  std::size_t max_elements = 100;
  std::size_t max_text_bytes = 64 * 1024;
  std::size_t max_id_bytes = 256;
  std::size_t max_name_bytes = 256;
  std::size_t max_url_bytes = 8 * 1024;

  // For what we decode of our own making (tests, fakes): nothing is capped.
  static constexpr ChainBounds Unbounded() {
    constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
    return {kAll, kAll, kAll, kAll, kAll};
  }
};

// The array at `key` of `root`: 1 to max_elements elements, each an object whose "type" is one
// of Plain, Image, At, AtAll, Voice, Quote, File (Source is never on the wire) with the fields
// its type needs. kInvalidArgument whose message starts with the offending field ("key[2].type",
// "key[0] (Image) needs url or base64"). Unknown fields are ignored.
util::Result<MessageChain> DecodeMessageChain(const util::JsonObject& root, std::string_view key,
                                              const ChainBounds& bounds = {});

// One element with only the fields its type uses (Plain always has "text").
util::Json EncodeMessageElement(const MessageElement& element);
// The chain without its Source elements.
util::JsonArray EncodeMessageChain(const MessageChain& chain);

}  // namespace sb::domain
