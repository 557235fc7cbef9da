#include "http/request.hpp"

namespace sb::http {
namespace {

template <typename List>
const std::string* FindIn(const List& list, std::string_view name) {
  for (const auto& [key, value] : list) {
    if (key == name) return &value;
  }
  return nullptr;
}

}  // namespace

std::string_view Request::Header(std::string_view lower_name) const {
  const std::string* v = FindIn(headers, lower_name);
  return v ? std::string_view(*v) : std::string_view();
}

std::optional<std::string_view> Request::Query(std::string_view name) const {
  const std::string* v = FindIn(query, name);
  if (!v) return std::nullopt;
  return std::string_view(*v);
}

std::string_view Request::PathParam(std::string_view name) const {
  const std::string* v = FindIn(path_params, name);
  return v ? std::string_view(*v) : std::string_view();
}

}  // namespace sb::http
