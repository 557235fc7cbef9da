// Case-insensitive comparison of ASCII tokens (HTTP header values such as Accept-Encoding codings
// or X-Client-Role, bot usernames): std::tolower per byte, so multi-byte UTF-8 compares exactly.
//   if (util::EqualsIgnoreCase(role, "Universal")) ...
#pragma once

#include <string_view>

namespace sb::util {

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace sb::util
