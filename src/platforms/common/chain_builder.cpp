#include "platforms/common/chain_builder.hpp"

#include <utility>

namespace sb::platforms::common {

tl::unexpected<util::Error> Invalid(std::string message) {
  return util::Fail(util::ErrorCode::kInvalidArgument, std::move(message));
}

void AppendPlain(domain::MessageChain& chain, std::string_view text) {
  if (text.empty()) return;
  if (!chain.empty() && chain.back().type == domain::ElementType::kPlain) {
    chain.back().text += text;
    return;
  }
  domain::MessageElement e;
  e.type = domain::ElementType::kPlain;
  e.text = std::string(text);
  chain.push_back(std::move(e));
}

void AppendAt(domain::MessageChain& chain, std::string target) {
  domain::MessageElement e;
  e.type = domain::ElementType::kAt;
  e.target = std::move(target);
  chain.push_back(std::move(e));
}

}  // namespace sb::platforms::common
