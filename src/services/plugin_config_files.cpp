#include "services/plugin_config_files.hpp"

#include <algorithm>
#include <cctype>

namespace sb::services {
namespace {

using util::ErrorCode;

bool HasPrefix(std::string_view key) {
  return key.substr(0, PluginConfigFiles::kPrefix.size()) == PluginConfigFiles::kPrefix;
}

}  // namespace

util::Result<std::string> PluginConfigFiles::Save(std::string_view original_name,
                                                  std::string_view bytes) {
  if (bytes.size() > kMaxBytes) {
    return util::Fail(ErrorCode::kPayloadTooLarge, "file size exceeds 10MB limit");
  }
  // The store names a file "<stem>_<random>.<ext>": with the stem fixed, every key has the
  // prefix and nothing of the uploader's name.
  std::string ext = ExtensionOf(SanitizeFileName(original_name));
  // A key goes into URLs and configs as it is: an odd extension is dropped rather than kept.
  const bool plain = ext.size() <= 16 && std::all_of(ext.begin(), ext.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) != 0;
                     });
  if (!plain) ext.clear();
  std::string name(kPrefix.substr(0, kPrefix.size() - 1));
  if (!ext.empty()) name.append(".").append(ext);
  return store_.Save(name, bytes);
}

util::Result<void> PluginConfigFiles::Delete(std::string_view key) {
  if (!HasPrefix(key)) return util::Fail(ErrorCode::kInvalidArgument, "invalid file key");
  if (!store_.Exists(key)) return util::Fail(ErrorCode::kNotFound, "no such config file");
  store_.Remove(key);
  return util::Ok();
}

util::Result<std::string> PluginConfigFiles::Load(std::string_view key) const {
  if (!HasPrefix(key)) return util::Fail(ErrorCode::kNotFound, "no such config file");
  auto bytes = store_.Load(key, kMaxBytes);
  if (!bytes && bytes.error().code == ErrorCode::kNotFound) {
    return util::Fail(ErrorCode::kNotFound, "no such config file");
  }
  return bytes;
}

}  // namespace sb::services
