// The import's report for a person: per kind, what was taken, what was already here, what
// conflicts and what was skipped, with the reasons; then the rows that could not be read.
#pragma once

#include <string>

#include "langbot_import/apply.hpp"
#include "langbot_import/plan.hpp"

namespace sb::langbot_import {

struct ReportHeader {
  std::string source;  // "SQLite database /srv/langbot/data/langbot.db"
  std::string config;  // LangBot's config.yaml read, or why none was
  int schema_version = 0;
  bool dry_run = false;
};

// `applied` is null for a dry run or a refused import (nothing was written).
std::string RenderReport(const ReportHeader& header, const Plan& plan, const Applied* applied);

}  // namespace sb::langbot_import
