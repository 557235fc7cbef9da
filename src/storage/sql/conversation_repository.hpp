// ConversationRepository over SQL (SQLite or PostgreSQL): one row per conversation holding its
// round and seq counters, one row per turn with the message as JSON, so trimming is a range delete
// on the round.
#pragma once

#include "domain/conversation.hpp"
#include "storage/sql/database.hpp"

namespace sb::storage::sql {

// Thread-safe; every method is one transaction on `db`, which must outlive this object.
class SqlConversationRepository final : public domain::ConversationRepository {
 public:
  explicit SqlConversationRepository(Database& db) : db_(db) {}

  util::Result<std::vector<domain::ConversationTurn>> Load(const domain::ConversationKey& key,
                                                           int max_rounds) override;
  // max_rounds == 0 forgets the conversation. Empty `turns` only trims.
  util::Result<void> Append(const domain::ConversationKey& key,
                            const std::vector<domain::ConversationTurn>& turns,
                            int max_rounds) override;
  // One transaction, a savepoint per item.
  std::vector<util::Result<void>> AppendBatch(const std::vector<AppendItem>& items) override;
  util::Result<void> Clear(const domain::ConversationKey& key) override;
  util::Result<void> ClearPipeline(const util::PipelineId& pipeline) override;
  util::Result<void> ClearBot(const util::BotId& bot) override;

 private:
  Database& db_;
};

}  // namespace sb::storage::sql
