// Files an admin uploads for a plugin's config (a key file, a certificate, a prompt): kept under
// the data directory with LangBot's key form `plugin_config_<hex>.<ext>`, which the config then
// holds and the plugin reads back through the core (`get_config_file`, docs/plugins.md).
//   PluginConfigFiles files(data_dir / "files" / "plugin_config");
//   auto key = files.Save("cert.pem", bytes);   // "plugin_config_3f9a01c2d41e4b07.pem"
//   files.Delete(*key);
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "services/file_store.hpp"
#include "util/error.hpp"

namespace sb::services {

// Thread-safe (each call works on its own file).
class PluginConfigFiles {
 public:
  static constexpr std::size_t kMaxBytes = 10 * 1024 * 1024;  // LangBot's limit
  static constexpr std::string_view kPrefix = "plugin_config_";

  explicit PluginConfigFiles(std::filesystem::path dir) : store_(std::move(dir)) {}

  // The new file's key; only the extension of `original_name` is kept. kPayloadTooLarge over
  // kMaxBytes, kInternal when the disk fails.
  util::Result<std::string> Save(std::string_view original_name, std::string_view bytes);
  // kInvalidArgument for a key without the prefix (nothing else may be deleted through here),
  // kNotFound when there is no such file.
  util::Result<void> Delete(std::string_view key);
  // The bytes of `key`; kNotFound for an unknown key or one without the prefix.
  util::Result<std::string> Load(std::string_view key) const;

 private:
  FileStore store_;
};

}  // namespace sb::services
