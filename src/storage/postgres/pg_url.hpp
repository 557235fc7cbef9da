// A database URL on its way into a message or a log: the password goes, the rest stays so an
// operator can still see which server and database were meant.
//   spdlog::info("database {}", MaskPassword("postgresql://sb:hunter2@db/sb"));
//   // "postgresql://sb:***@db/sb"
#pragma once

#include <string>
#include <string_view>

namespace sb::storage::postgres {

// Masks the password of a `postgres[ql]://user:password@host/...` URL (also a `password=` query
// parameter) or of a `key=value` connection string. Text that is neither comes back unchanged.
std::string MaskPassword(std::string_view url);

// The password a URL or connection string carries (percent-decoding aside), empty when none:
// what ScrubSecret removes from messages when libpq could not parse the URL itself.
std::string PasswordOf(std::string_view url);

// `text` with every occurrence of `secret` replaced by "***" (nothing when `secret` is empty):
// for messages from libpq, which may quote parts of the connection string.
std::string ScrubSecret(std::string text, std::string_view secret);

}  // namespace sb::storage::postgres
