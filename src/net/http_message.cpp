// HttpResponse helpers that need no I/O.
#include "net/http_message.hpp"

namespace sb::net {

std::string_view HttpResponse::Header(std::string_view lower_name) const {
  // Names are stored lower case by the client, so a plain comparison is a case-insensitive one.
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return {};
}

}  // namespace sb::net
