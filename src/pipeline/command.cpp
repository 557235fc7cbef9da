#include "pipeline/command.hpp"

namespace sb::pipeline {
namespace {

constexpr std::string_view kSpace = " \t\r\n\f\v";
constexpr std::string_view kAsciiPrefix = "!";
constexpr std::string_view kFullWidthPrefix = "\xEF\xBC\x81";  // U+FF01 "！"

}  // namespace

const char* CommandKindName(CommandKind kind) {
  switch (kind) {
    case CommandKind::kNotCommand:
      return "not-command";
    case CommandKind::kHelp:
      return "help";
    case CommandKind::kReset:
      return "reset";
    case CommandKind::kUnknown:
      return "unknown";
  }
  return "not-command";
}

Command ParseCommand(std::string_view text) {
  Command command;
  std::size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return command;
  text.remove_prefix(begin);
  if (text.starts_with(kAsciiPrefix)) {
    text.remove_prefix(kAsciiPrefix.size());
  } else if (text.starts_with(kFullWidthPrefix)) {
    text.remove_prefix(kFullWidthPrefix.size());
  } else {
    return command;
  }
  // LangBot takes what directly follows the prefix as the name, so "! help" is the command ""
  // with the argument "help" (an unknown command), not "!help".
  const bool has_name = !text.empty() && kSpace.find(text.front()) == std::string_view::npos;
  // Runs of whitespace separate words (LangBot splits on single spaces and keeps the empty
  // words between doubled spaces as arguments; nobody means those).
  std::vector<std::string> words;
  while (true) {
    std::size_t start = text.find_first_not_of(kSpace);
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    std::size_t end = text.find_first_of(kSpace);
    words.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end);
  }
  auto first_arg = words.begin();
  if (has_name) command.name = std::move(*first_arg++);
  command.args.assign(std::make_move_iterator(first_arg), std::make_move_iterator(words.end()));
  if (command.name == "help") {
    command.kind = CommandKind::kHelp;
  } else if (command.name == "reset") {
    command.kind = CommandKind::kReset;
  } else {
    command.kind = CommandKind::kUnknown;
  }
  return command;
}

}  // namespace sb::pipeline
