// Case-insensitive comparison of the ASCII tokens platforms send (header values such as
// X-Client-Role, bot usernames): std::tolower per byte, so multi-byte UTF-8 compares exactly.
//   if (common::EqualsIgnoreCase(role, "Universal")) ...
#pragma once

#include <string_view>

namespace sb::platforms::common {

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace sb::platforms::common
