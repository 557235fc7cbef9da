// Messages as text for people: one line of an event log, the plain text of a chain.
//   log.text = TruncateUtf8("message from Bob: " + DescribeChain(chain), 4000);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "domain/message.hpp"

namespace sb::domain {

// "hello @42 [Image]": every element in a short form; Source elements are left out.
std::string DescribeChain(const MessageChain& chain);
// The Plain elements' text, joined.
std::string PlainTextOf(const MessageChain& chain);
// The http(s) URLs of the chain's images (data: URLs would bloat a log).
std::vector<std::string> ImageUrlsOf(const MessageChain& chain);
// Cut at a UTF-8 boundary, with "…" appended when anything was cut.
std::string TruncateUtf8(std::string text, std::size_t max_bytes);

// A received Quote of message `id`: `quoted_text` (the quoted message's text, empty when unknown)
// cut to kMaxQuotedTextBytes, `sender` its author's id (may be empty).
MessageElement MakeQuote(std::string id, std::string quoted_text, std::string sender = {});

// A quoted message's chain as the text a Quote carries: Plain as it is, At as "@id", AtAll as
// "@all", media as "[Image]", "[Voice]", "[File name]"; Quote and Source left out. Not cut.
std::string QuotableText(const MessageChain& chain);

// The texts of the chain's Quote elements that carry one, in chain order.
std::vector<std::string> QuotedTextsOf(const MessageChain& chain);

}  // namespace sb::domain
