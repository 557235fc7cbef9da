// The repositories write SQLite-style parameters (`?` and `?N`); PostgreSQL wants `$N`. This
// rewrites them outside string literals, quoted identifiers, dollar quotes and comments.
//   auto t = TranslatePlaceholders("SELECT * FROM bots WHERE uuid = ? AND name <> '?'");
//   // t->text == "SELECT * FROM bots WHERE uuid = $1 AND name <> '?'", t->parameter_count == 1
#pragma once

#include <string>
#include <string_view>

#include "util/error.hpp"

namespace sb::storage::postgres {

struct TranslatedSql {
  std::string text;
  int parameter_count = 0;  // the highest parameter number used
};

// Numbers follow SQLite: `?N` is parameter N; a bare `?` is one more than the highest number
// assigned so far (so "?2, ?, ?1" is "$2, $3, $1"). PostgreSQL's own `?`-operators (jsonb `?|`
// and the like) cannot be written through this layer; use their function forms (jsonb_exists).
// Fails with kInvalidArgument for `?0` or a number above 65535 (the protocol's limit).
util::Result<TranslatedSql> TranslatePlaceholders(std::string_view sql);

}  // namespace sb::storage::postgres
