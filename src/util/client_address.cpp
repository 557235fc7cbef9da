#include "util/client_address.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>

namespace sb::util {

std::string ClientAddressKey(std::string_view address) {
  unsigned char bytes[16];
  const std::string text(address);
  if (text.find(':') == std::string::npos || inet_pton(AF_INET6, text.c_str(), bytes) != 1) {
    return text;
  }
  static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(bytes, bytes + 12, kMapped)) {
    return fmt::format("{}.{}.{}.{}", bytes[12], bytes[13], bytes[14], bytes[15]);
  }
  return fmt::format("{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}::/64", bytes[0], bytes[1],
                     bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7]);
}

}  // namespace sb::util
