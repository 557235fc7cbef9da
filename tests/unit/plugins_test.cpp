// Plugin packages: the manifest parser's field-named errors, version order, and unpacking of
// real zip files built here with libarchive, malicious ones included (zip-slip, absolute paths,
// symlinks, bombs, a manifest naming another plugin), each leaving nothing behind.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "plugins/manifest.hpp"
#include "plugins/package.hpp"
#include "util/crypto.hpp"

namespace sb::plugins {
namespace {

namespace fs = std::filesystem;
using util::ErrorCode;

const char* kManifest = R"(apiVersion: v1
kind: Plugin
metadata:
  author: alice
  name: echo
  version: 1.2.0
  label:
    en_US: Echo
    zh_Hans: 回声
  description: Says things back
  icon: assets/icon.svg
spec:
  config:
    - name: greeting
      type: string
      required: true
      default: "hello"
    - name: loud
      type: boolean
      default: false
    - name: times
      type: integer
      default: 2
execution:
  command: [python3, main.py]
)";

struct ZipEntry {
  enum class Kind { kFile, kDir, kSymlink };
  ZipEntry(std::string n, std::string d, Kind k = Kind::kFile, std::string target = {},
           int m = 0644)
      : name(std::move(n)), data(std::move(d)), kind(k), link_target(std::move(target)), mode(m) {}
  std::string name;
  std::string data;
  Kind kind;
  std::string link_target;
  int mode;
};

std::string Zip(const std::vector<ZipEntry>& entries) {
  archive* a = archive_write_new();
  archive_write_set_format_zip(a);
  std::vector<char> buffer(8 << 20);
  std::size_t used = 0;
  archive_write_open_memory(a, buffer.data(), buffer.size(), &used);
  for (const auto& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.name.c_str());
    switch (e.kind) {
      case ZipEntry::Kind::kFile:
        archive_entry_set_filetype(entry, AE_IFREG);
        archive_entry_set_size(entry, static_cast<la_int64_t>(e.data.size()));
        break;
      case ZipEntry::Kind::kDir:
        archive_entry_set_filetype(entry, AE_IFDIR);
        break;
      case ZipEntry::Kind::kSymlink:
        archive_entry_set_filetype(entry, AE_IFLNK);
        archive_entry_set_symlink(entry, e.link_target.c_str());
        break;
    }
    archive_entry_set_perm(entry, e.kind == ZipEntry::Kind::kDir ? 0755 : e.mode);
    archive_write_header(a, entry);
    if (e.kind == ZipEntry::Kind::kFile) archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return std::string(buffer.data(), used);
}

std::vector<ZipEntry> Valid() {
  return {{"manifest.yaml", kManifest},
          {"main.py", "print('hi')\n", ZipEntry::Kind::kFile, "", 0755},
          {"assets/", "", ZipEntry::Kind::kDir},
          {"assets/icon.svg", "<svg/>"}};
}

class PackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("sb-plugins-" + std::to_string(rd()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // What the plugins folder holds after an attempt (failed ones must leave nothing).
  std::vector<std::string> Listing() {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root_)) {
      out.push_back(fs::relative(e.path(), root_).string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  util::Result<PluginManifest> Unpack(const std::string& zip, PackageLimits limits = {},
                                      std::string_view id = "alice/echo") {
    return UnpackPackage(zip, dest_(), limits, id);
  }
  fs::path dest_() const { return root_ / "alice" / "echo" / "1.2.0"; }

  void ExpectRefused(const std::string& zip, ErrorCode code, std::string_view says,
                     PackageLimits limits = {}) {
    auto r = Unpack(zip, limits);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, code) << r.error().message;
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.rfind("bad package: ", 0), 0u) << r.error().message;
    for (const auto& path : Listing()) {
      EXPECT_TRUE(fs::is_directory(root_ / path)) << "left behind: " << path;
    }
    EXPECT_FALSE(fs::exists(dest_()));
  }

  fs::path root_;
};

// ---- manifest ---------------------------------------------------------------------------------

TEST(Manifest, ReadsLangBotMetadataConfigAndTheCommand) {
  auto m = ParseManifest(kManifest);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->id(), "alice/echo");
  EXPECT_EQ(m->version, "1.2.0");
  EXPECT_EQ(m->label.at("zh_Hans").as_string(), "回声");
  EXPECT_EQ(m->description.at("en_US").as_string(), "Says things back");
  EXPECT_EQ(m->icon, "assets/icon.svg");
  ASSERT_EQ(m->config.size(), 3u);
  EXPECT_EQ(m->config[0].at("default").as_string(), "hello");  // quoted stays a string
  EXPECT_EQ(m->config[1].at("default").as_bool(), false);
  EXPECT_EQ(m->config[2].at("default").as_int64(), 2);
  EXPECT_EQ(m->command, (std::vector<std::string>{"python3", "main.py"}));
}

TEST(Manifest, ErrorsNameTheField) {
  auto expect = [](std::string text, std::string_view says) {
    auto m = ParseManifest(text);
    ASSERT_FALSE(m) << text;
    EXPECT_EQ(m.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(m.error().message.find(says), std::string::npos) << m.error().message;
  };
  auto replace = [](std::string from, std::string to) {
    std::string text = kManifest;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  expect("metadata: [", "not valid YAML");
  expect("- a\n- b\n", "must be a mapping");
  expect(replace("  name: echo\n", ""), "metadata.name is required");
  expect(replace("name: echo", "name: ../echo"), "metadata.name must be");
  expect(replace("author: alice", "author: ali ce"), "metadata.author must be");
  expect(replace("version: 1.2.0", "version: one"), "metadata.version must look like 1.2.3");
  expect(replace("kind: Plugin", "kind: Adapter"), "kind must be Plugin");
  expect(replace("icon: assets/icon.svg", "icon: /etc/passwd"), "metadata.icon");
  expect(replace("    - name: loud\n", "    - nam: loud\n"), "spec.config[1] needs a name");
  expect(replace("  command: [python3, main.py]", "  python:\n    path: main.py\n    attr: X"),
         "LangBot SDK plugins");
  expect(replace("[python3, main.py]", "[/bin/sh, -c, x]"),
         "must start with a file of the package");
  expect(replace("[python3, main.py]", "[python3, ../../x.py]"), "script inside the package");
  expect(replace("[python3, main.py]", "[]"), "non-empty list");
  // Interpreters run the package's own script only: no inline code, no system module.
  expect(replace("[python3, main.py]", "[python3, -c, 'import os']"), "no inline code");
  expect(replace("[python3, main.py]", "[python3, -m, http.server]"), "no inline code");
  expect(replace("[python3, main.py]", "[node, -e, 'x']"), "no inline code");
  expect(replace("[python3, main.py]", "[sh, -c, 'cat /etc/passwd']"), "no inline code");
  expect(replace("[python3, main.py]", "[bash]"), "followed by a script inside the package");
  expect(replace("[python3, main.py]", "[python3, /usr/lib/python3/x.py]"),
         "script inside the package");
  expect(replace("[python3, main.py]", "[python3, main.py]\n  network: maybe"),
         "execution.network must be true or false");
  expect(replace("label:", "label:\n    de_DE: \"\xff\xfe\"\n"), "not valid UTF-8");
  expect(replace("version: 1.2.0", "version: 1.2.0\xc0\xaf"), "not valid UTF-8");  // overlong
}

TEST(Manifest, NetworkIsAskedForExplicitly) {
  auto plain = ParseManifest(kManifest);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->network);
  std::string text = kManifest;
  text.replace(text.find("[python3, main.py]"), 18, "[python3, main.py]\n  network: true");
  auto asking = ParseManifest(text);
  ASSERT_TRUE(asking) << asking.error().message;
  EXPECT_TRUE(asking->network);
}

TEST(Manifest, VersionsCompareByTheirNumbers) {
  EXPECT_LT(CompareVersions("1.9.2", "1.10.0"), 0);
  EXPECT_GT(CompareVersions("2.0", "1.99.99"), 0);
  EXPECT_EQ(CompareVersions("1.2", "1.2.0"), 0);
  EXPECT_LT(CompareVersions("1.0.0-beta", "1.0.0"), 0);
  EXPECT_TRUE(ValidPluginIdPart("Hello_Plugin-2"));
  EXPECT_FALSE(ValidPluginIdPart("a/b"));
  EXPECT_FALSE(ValidPluginIdPart(""));
}

// ---- unpacking --------------------------------------------------------------------------------

TEST_F(PackageTest, AValidPackageIsUnpackedWithItsExecutableBits) {
  auto m = Unpack(Zip(Valid()));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->id(), "alice/echo");
  std::ifstream main(dest_() / "main.py");
  std::string line;
  std::getline(main, line);
  EXPECT_EQ(line, "print('hi')");
  EXPECT_TRUE(fs::is_regular_file(dest_() / "assets" / "icon.svg"));
  struct stat st {};
  ASSERT_EQ(::stat((dest_() / "main.py").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  ASSERT_EQ(::stat((dest_() / "manifest.yaml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_FALSE(fs::exists(fs::path(dest_()).concat(".partial")));
}

TEST_F(PackageTest, PluginFoldersAreTheOwnersOnly) {
  const mode_t old_umask = ::umask(022);
  auto r = Unpack(Zip(Valid()));
  ::umask(old_umask);
  ASSERT_TRUE(r) << r.error().message;
  for (const auto& folder : {root_ / "alice", root_ / "alice" / "echo", dest_()}) {
    struct stat st {};
    ASSERT_EQ(::stat(folder.c_str(), &st), 0) << folder;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << folder;
  }
}

TEST_F(PackageTest, ZipSlipAndAbsolutePathsAreRefused) {
  auto slip = Valid();
  slip.push_back({"assets/../../../../evil.sh", "rm -rf /"});
  ExpectRefused(Zip(slip), ErrorCode::kInvalidArgument, "leaves the plugin's folder");
  EXPECT_FALSE(fs::exists(root_ / "evil.sh"));
  auto absolute = Valid();
  absolute.push_back({"/tmp/sb-evil", "x"});
  ExpectRefused(Zip(absolute), ErrorCode::kInvalidArgument, "absolute path");
  auto backslash = Valid();
  backslash.push_back({"..\\evil", "x"});
  // libarchive reads a '\\' of a zip as '/', so this is the '..' case again; refused either way.
  ExpectRefused(Zip(backslash), ErrorCode::kInvalidArgument, "evil");
}

TEST_F(PackageTest, LinksAreRefused) {
  auto symlink = Valid();
  symlink.push_back({"escape", "", ZipEntry::Kind::kSymlink, "/etc"});
  ExpectRefused(Zip(symlink), ErrorCode::kInvalidArgument, "symbolic link");
  // Even one pointing inside the folder: the supervisor never follows links of a package.
  auto inner = Valid();
  inner.push_back({"alias.py", "", ZipEntry::Kind::kSymlink, "main.py"});
  ExpectRefused(Zip(inner), ErrorCode::kInvalidArgument, "links are not allowed");
}

TEST_F(PackageTest, LimitsCountRealBytesAndEntries) {
  auto bomb = Valid();
  bomb.push_back({"zeros.bin", std::string(3 << 20, '\0')});  // compresses to a few KiB
  PackageLimits limits;
  limits.max_file_bytes = 1 << 20;
  ExpectRefused(Zip(bomb), ErrorCode::kPayloadTooLarge, "larger than 1048576 bytes", limits);
  limits = {};
  limits.max_unpacked_bytes = 2 << 20;
  ExpectRefused(Zip(bomb), ErrorCode::kPayloadTooLarge, "more than 2097152 bytes", limits);
  limits = {};
  limits.max_entries = 3;
  ExpectRefused(Zip(Valid()), ErrorCode::kPayloadTooLarge, "more than 3 entries", limits);
  limits = {};
  limits.max_package_bytes = 100;
  ExpectRefused(Zip(Valid()), ErrorCode::kPayloadTooLarge, "over the limit of 100", limits);
}

TEST_F(PackageTest, TheManifestMustBeThereAndNameTheRequestedPlugin) {
  ExpectRefused(Zip({{"main.py", "x"}}), ErrorCode::kInvalidArgument, "no manifest.yaml");
  auto r = UnpackPackage(Zip(Valid()), dest_(), {}, "mallory/echo");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("names alice/echo instead of mallory/echo"), std::string::npos)
      << r.error().message;
  std::string broken = kManifest;
  broken.replace(broken.find("version: 1.2.0"), 14, "version: x");
  ExpectRefused(Zip({{"manifest.yaml", broken}, {"main.py", "x"}}), ErrorCode::kInvalidArgument,
                "metadata.version");
  std::string script = kManifest;
  script.replace(script.find("[python3, main.py]"), 18, "[./run.sh]");
  ExpectRefused(Zip({{"manifest.yaml", script}}), ErrorCode::kInvalidArgument,
                "names ./run.sh, which the package does not hold");
}

TEST_F(PackageTest, GarbageDuplicatesAndAnExistingFolder) {
  ExpectRefused("this is not a zip at all", ErrorCode::kInvalidArgument, "not a zip file");
  auto zip = Zip(Valid());
  ExpectRefused(zip.substr(0, zip.size() / 2), ErrorCode::kInvalidArgument, "");
  auto twice = Valid();
  twice.push_back({"main.py", "evil"});
  ExpectRefused(Zip(twice), ErrorCode::kInvalidArgument, "appears twice");
  ASSERT_TRUE(Unpack(zip));
  auto again = Unpack(zip);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kConflict);
  EXPECT_TRUE(fs::exists(dest_() / "main.py"));  // the installed copy is untouched
}

TEST_F(PackageTest, PackageFilesAreReadNeverThroughALink) {
  const fs::path dir = root_ / "pkg";
  fs::create_directories(dir / "assets");
  std::ofstream(dir / "README.md") << "# Hello";
  std::ofstream(root_ / "secret") << "jwt secret";
  fs::create_symlink(root_ / "secret", dir / "LINK.md");
  fs::create_directory_symlink(root_, dir / "up");
  auto readme = ReadPackageFile(dir, "README.md", 1024);
  ASSERT_TRUE(readme) << readme.error().message;
  EXPECT_EQ(*readme, "# Hello");
  for (const char* path : {"LINK.md", "up/secret", "../secret", "assets", "missing.md"}) {
    auto r = ReadPackageFile(dir, path, 1024);
    ASSERT_FALSE(r) << path;
    EXPECT_EQ(r.error().code, ErrorCode::kNotFound) << path;
  }
  EXPECT_EQ(ReadPackageFile(dir, "README.md", 3).error().code, ErrorCode::kPayloadTooLarge);
}

TEST(Checksum, MatchesTheSha256OfThePackage) {
  const std::string zip = "package bytes";
  EXPECT_TRUE(VerifyChecksum(zip, ""));
  EXPECT_TRUE(VerifyChecksum(zip, util::Sha256Hex(zip)));
  std::string upper = util::Sha256Hex(zip);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_TRUE(VerifyChecksum(zip, upper));
  auto bad = VerifyChecksum(zip, util::Sha256Hex("other"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("checksum mismatch"), std::string::npos);
}

}  // namespace
}  // namespace sb::plugins
