// A bot: a name, a platform adapter with its config, and the pipeline its messages go through.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace sb::domain {

struct Bot {
  util::BotId uuid;
  std::string name;
  std::string description;
  std::string adapter;  // a name of the adapter catalogue
  util::JsonObject adapter_config;
  bool enable = false;
  std::optional<util::PipelineId> use_pipeline_uuid;
  std::optional<int> log_retention;  // log entries kept; unset: the instance default
  util::TimePoint created_at;
  util::TimePoint updated_at;
};

// Implementations are thread-safe and may block: call them from the blocking pool.
class BotRepository {
 public:
  virtual ~BotRepository() = default;
  // Oldest first.
  virtual util::Result<std::vector<Bot>> List() = 0;
  // kNotFound when absent.
  virtual util::Result<Bot> Get(const util::BotId& id) = 0;
  // kInvalidArgument when use_pipeline_uuid names no pipeline (checked atomically).
  virtual util::Result<void> Insert(const Bot& bot) = 0;
  // Replaces every field but uuid and created_at. kNotFound / kInvalidArgument as above.
  virtual util::Result<void> Update(const Bot& bot) = 0;
  // Deletes the bot and its log. kNotFound when absent.
  virtual util::Result<void> Delete(const util::BotId& id) = 0;
};

}  // namespace sb::domain
