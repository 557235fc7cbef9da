#include "platforms/wecom/wecomcs_cursors.hpp"

namespace sb::platforms::wecom {

std::string KfCursorStore::Get(const std::string& bot_uuid, const std::string& open_kfid) const {
  std::lock_guard lock(mu_);
  auto it = cursors_.find({bot_uuid, open_kfid});
  return it == cursors_.end() ? std::string() : it->second;
}

void KfCursorStore::Set(const std::string& bot_uuid, const std::string& open_kfid,
                        std::string cursor) {
  std::lock_guard lock(mu_);
  auto key = std::make_pair(bot_uuid, open_kfid);
  if (cursors_.size() >= kMaxEntries && !cursors_.contains(key)) return;
  cursors_.insert_or_assign(std::move(key), std::move(cursor));
}

std::size_t KfCursorStore::size() const {
  std::lock_guard lock(mu_);
  return cursors_.size();
}

}  // namespace sb::platforms::wecom
