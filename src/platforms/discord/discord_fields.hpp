// JSON field reads shared by the Discord codec files: a string that may be absent, a string that
// must be there, a `true` flag, and a byte cut that keeps UTF-8 whole. Internal to
// platforms/discord.
//   auto id = RequireString(user, "id", "d.user");  // kInvalidArgument naming d.user.id
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::platforms::discord {

// Names (user names, file names) are cut to this many bytes.
inline constexpr std::size_t kMaxNameBytes = 256;

const util::Json* Find(const util::JsonObject& o, std::string_view key);

// A string field, or the empty string when absent or null; kInvalidArgument for another type.
util::Result<std::string> OptionalString(const util::JsonObject& o, std::string_view key,
                                         std::string_view where);

// A non-empty string field; kInvalidArgument naming `where`.`key` otherwise.
util::Result<std::string> RequireString(const util::JsonObject& o, std::string_view key,
                                        std::string_view where);

// true only for a JSON `true`.
bool TrueField(const util::JsonObject& o, std::string_view key);

// `s` cut to at most `max` bytes, never inside a UTF-8 sequence.
std::string Truncated(std::string_view s, std::size_t max);

}  // namespace sb::platforms::discord
