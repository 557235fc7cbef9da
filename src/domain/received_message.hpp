// A message a chat platform delivered to a bot, in the shared message model: what an adapter hands
// to the runtime and what the pipeline's message driver takes in.
#pragma once

#include <string>

#include "domain/message.hpp"

namespace sb::domain {

struct ReceivedMessage {
  TargetType chat_type = TargetType::kPerson;
  std::string chat_id;    // the person (private chat) or the group
  std::string sender_id;  // the person who wrote; equals chat_id in private chats
  std::string sender_name;
  std::string message_id;  // the platform's id, for replies and quotes; may be empty
  MessageChain chain;      // At elements carry the platform's user ids as `target`
};

}  // namespace sb::domain
