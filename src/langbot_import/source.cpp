#include "langbot_import/source.hpp"

#include <fmt/format.h>

namespace sb::langbot_import {

bool IsPlainName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

util::Result<std::string> SelectColumns(const std::string& table,
                                        const std::vector<std::string>& columns) {
  if (!IsPlainName(table) || columns.empty()) {
    return util::Fail(util::ErrorCode::kInternal, "bad table name");
  }
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (!IsPlainName(columns[i])) return util::Fail(util::ErrorCode::kInternal, "bad column name");
    if (i) sql += ", ";
    sql += fmt::format("\"{}\"", columns[i]);
  }
  sql += fmt::format(" FROM \"{}\"", table);
  return sql;
}

}  // namespace sb::langbot_import
