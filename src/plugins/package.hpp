// A plugin package: a zip holding manifest.yaml at its root and the plugin's files. Unpacking is
// where an untrusted download meets the disk, so it refuses anything that could reach outside
// the plugin's folder or fill it: absolute paths, '..', links of any kind, devices, duplicate
// entries, more files or bytes than the limits (counted as written, not as the zip declares).
//   auto manifest = UnpackPackage(zip_bytes, data_dir / "plugins/alice/echo/1.0.0", {},
//   "alice/echo"); if (!manifest) task.Fail(manifest.error().message);  // "bad package: entry ../x
//   leaves ..."
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "plugins/manifest.hpp"
#include "util/error.hpp"

namespace sb::plugins {

struct PackageLimits {
  std::uint64_t max_package_bytes = 50ull << 20;    // the zip itself
  std::uint64_t max_unpacked_bytes = 200ull << 20;  // all files together
  std::uint64_t max_file_bytes = 100ull << 20;      // any one file
  std::size_t max_entries = 2000;                   // files and folders
};

// Unpacks `zip` into `dest`, which must not exist yet; on success `dest` holds the files and the
// manifest is returned, on failure nothing is left behind. `expected_id` ("author/name", may be
// empty) must match the manifest's. Errors: kPayloadTooLarge over a limit, kInvalidArgument for
// anything else wrong with the package (each message starts "bad package:"), kInternal when
// the disk fails.
util::Result<PluginManifest> UnpackPackage(std::string_view zip, const std::filesystem::path& dest,
                                           const PackageLimits& limits,
                                           std::string_view expected_id);

// kInvalidArgument "bad package: checksum mismatch" unless `expected_sha256_hex` (any case) is the
// SHA-256 of `zip`; an empty expectation passes (the marketplace gave none).
util::Result<void> VerifyChecksum(std::string_view zip, std::string_view expected_sha256_hex);

// A regular file `relative` of the unpacked package `dir`, never through a link: the final name
// is opened with O_NOFOLLOW and the canonical path must stay inside the package (an unsandboxed
// plugin, which can write its folder, could otherwise point its README at the server's
// secrets). kNotFound for anything else, kPayloadTooLarge over `max_bytes`.
util::Result<std::string> ReadPackageFile(const std::filesystem::path& dir,
                                          const std::string& relative, std::uintmax_t max_bytes);

// The file `name` of the package's `assets/` folder (where LangBot's SDK keeps a plugin's
// images and pages), for LangBot's public `.../assets/{filepath}` route. `name` is one path
// component (no '/', no "..", no control character); `assets/` must be a real folder, not a
// link, and the file is read as ReadPackageFile reads. kNotFound for anything else,
// kPayloadTooLarge over `max_bytes`.
util::Result<std::string> ReadPackageAsset(const std::filesystem::path& dir, std::string_view name,
                                           std::uintmax_t max_bytes);

}  // namespace sb::plugins
