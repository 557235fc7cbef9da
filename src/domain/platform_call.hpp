// A chat platform's HTTP call to a bot's webhook URL (`/bots/{uuid}[/path]`) and the answer to
// it, as plain values: the HTTP layer builds the call, the bot's adapter answers it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sb::domain {

struct PlatformCall {
  std::string method;
  std::string path;  // what follows /bots/{uuid}: "" or "/callback", ...
  std::vector<std::pair<std::string, std::string>> query;    // decoded, in order
  std::vector<std::pair<std::string, std::string>> headers;  // names lower case
  std::string body;
  std::string remote_address;  // the caller's IP address as the server saw it

  // Empty when absent.
  std::string_view Header(std::string_view lower_name) const {
    for (const auto& [name, value] : headers) {
      if (name == lower_name) return value;
    }
    return {};
  }
};

struct PlatformAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers = {};  // extra ones (Cache-Control)
};

}  // namespace sb::domain
