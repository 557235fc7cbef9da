// Built-in commands: a message starting with "!" or the full-width "！" is a command, split into
// a name and whitespace-separated arguments. "!help" and "!reset" are known; anything else is an
// unknown command (still a command: it must not reach the model).
//   Command c = ParseCommand(trigger.text);
//   if (c.kind == CommandKind::kReset) memory.Clear(session);
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sb::pipeline {

enum class CommandKind { kNotCommand, kHelp, kReset, kUnknown };
const char* CommandKindName(CommandKind kind);

struct Command {
  CommandKind kind = CommandKind::kNotCommand;
  std::string name;  // as typed, without the prefix; may be empty ("!" alone)
  std::vector<std::string> args;
};

// Surrounding whitespace is ignored, as LangBot strips the text first. Names match exactly
// (case-sensitive), as LangBot's command manager does.
Command ParseCommand(std::string_view text);

}  // namespace sb::pipeline
