// The key a client is counted under by throttles and connection limits: an IPv6 client by its
// /64 (one subscriber's prefix, which holds more addresses than any counter could), an
// IPv4-mapped IPv6 address by its IPv4 address, anything else as it is.
//   ClientAddressKey("2001:db8:1:2:aa::1") == "2001:0db8:0001:0002::/64"
//   ClientAddressKey("::ffff:10.0.0.7") == "10.0.0.7"
#pragma once

#include <string>
#include <string_view>

namespace sb::util {

std::string ClientAddressKey(std::string_view address);

}  // namespace sb::util
