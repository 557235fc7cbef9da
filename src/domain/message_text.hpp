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

}  // namespace sb::domain
