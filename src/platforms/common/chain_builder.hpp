// What every codec does while decoding a platform's message into the shared model: append text
// (merged into the Plain element before it), append a mention, and refuse malformed input with
// kInvalidArgument. The platform's own reading of its wire format stays in its codec.
//   common::AppendPlain(chain, "hello ");
//   common::AppendAt(chain, user_id);
//   if (id.empty()) return common::Invalid("event.user is required");
#pragma once

#include <string>
#include <string_view>

#include "domain/message.hpp"
#include "util/error.hpp"

namespace sb::platforms::common {

// kInvalidArgument with `message`, for a codec's `return Invalid(...)` on bad input.
tl::unexpected<util::Error> Invalid(std::string message);

// Appends `text` to the chain, into the last element when that is Plain; nothing when empty.
void AppendPlain(domain::MessageChain& chain, std::string_view text);

// Appends an At element naming `target` (the platform's user id).
void AppendAt(domain::MessageChain& chain, std::string target);

}  // namespace sb::platforms::common
