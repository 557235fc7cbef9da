// Text from clients on its way into a log line: control characters (a decoded "%0A" in a path)
// would let a client forge log lines, so they are written as \xNN.
//   spdlog::info("GET {}", EscapeForLog(request.path));
#pragma once

#include <string>
#include <string_view>

namespace sb::util {

std::string EscapeForLog(std::string_view text);

}  // namespace sb::util
