// UTF-8 validity (RFC 3629): no overlong forms, no surrogates, nothing past U+10FFFF.
//   if (!util::IsValidUtf8(text)) return Fail(kInvalidArgument, "not UTF-8");
#pragma once

#include <string_view>

namespace sb::util {

bool IsValidUtf8(std::string_view text);

}  // namespace sb::util
