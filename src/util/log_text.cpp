#include "util/log_text.hpp"

#include <fmt/format.h>

#include <iterator>

namespace sb::util {

std::string EscapeForLog(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f || c == '\\') {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", c);
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

}  // namespace sb::util
