#include "langbot_import/importer.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "config/config.hpp"
#include "langbot_import/config_mapping.hpp"
#include "langbot_import/plan.hpp"
#include "langbot_import/postgres_source.hpp"
#include "langbot_import/report.hpp"
#include "langbot_import/snapshot.hpp"
#include "langbot_import/sqlite_source.hpp"

namespace sb::langbot_import {
namespace {

namespace fs = std::filesystem;
using util::ErrorCode;
using util::Fail;

constexpr std::uintmax_t kMaxConfigBytes = 1024 * 1024;

util::Result<std::string> ReadSmallFile(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return Fail(ErrorCode::kNotFound, fmt::format("cannot read {}", path.string()));
  if (size > kMaxConfigBytes) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} is larger than 1 MiB: not LangBot's config.yaml", path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("cannot read {}", path.string()));
  }
  return text.str();
}

// LangBot's database section: which backend, and where its SQLite file is (relative paths are
// relative to LangBot's working directory, the folder holding data/).
struct DatabaseSection {
  std::string use = "sqlite";
  std::string sqlite_path = "data/langbot.db";
};

DatabaseSection ReadDatabaseSection(const std::string& yaml_text) {
  DatabaseSection d;
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    if (root.IsMap() && root["database"] && root["database"].IsMap()) {
      const YAML::Node db = root["database"];
      if (db["use"] && db["use"].IsScalar()) d.use = db["use"].as<std::string>();
      if (db["sqlite"] && db["sqlite"].IsMap() && db["sqlite"]["path"] &&
          db["sqlite"]["path"].IsScalar()) {
        d.sqlite_path = db["sqlite"]["path"].as<std::string>();
      }
    }
  } catch (const YAML::Exception&) {
    // MapLangbotConfig reports a file that is not YAML; the defaults are LangBot's own.
  }
  return d;
}

}  // namespace

util::Result<std::unique_ptr<Source>> OpenSource(const ImportOptions& options,
                                                 std::string& config_text,
                                                 std::string& config_note) {
  config_note = "none read";
  if (!options.from_database_url.empty()) {
    if (!options.from.empty()) {
      fs::path config = options.from / "config.yaml";
      if (auto text = ReadSmallFile(config)) {
        config_text = std::move(*text);
        config_note = config.string();
      }
    }
    auto pg = PostgresSource::Open(options.from_database_url);
    if (!pg) return tl::unexpected(pg.error());
    return std::unique_ptr<Source>(std::move(*pg));
  }
  fs::path dir = options.from;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Fail(ErrorCode::kNotFound, fmt::format("{} is not a directory", dir.string()));
  }
  // The folder LangBot runs in holds data/; accept it as well as data/ itself.
  if (!fs::exists(dir / "config.yaml", ec) && !fs::exists(dir / "langbot.db", ec) &&
      fs::exists(dir / "data" / "config.yaml", ec)) {
    dir /= "data";
  }
  const fs::path config = dir / "config.yaml";
  DatabaseSection db;
  if (fs::exists(config, ec)) {
    auto text = ReadSmallFile(config);
    if (!text) return tl::unexpected(text.error());
    config_text = std::move(*text);
    config_note = config.string();
    db = ReadDatabaseSection(config_text);
  }
  if (db.use == "postgresql") {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} says LangBot keeps its data in PostgreSQL (database.use): pass "
                            "--from-database-url postgresql://user:password@host:port/database",
                            config.string()));
  }
  fs::path file = db.sqlite_path;
  if (file.is_relative()) {
    // Relative to LangBot's working directory, the parent of data/; data/ itself as fallback.
    const fs::path from_root = dir.parent_path() / file;
    file = fs::exists(from_root, ec) ? from_root : dir / file.filename();
  }
  if (!fs::exists(file, ec)) {
    if (config_text.empty()) {
      return Fail(ErrorCode::kNotFound,
                  fmt::format("{} is not a LangBot data directory: it has neither config.yaml "
                              "nor langbot.db",
                              dir.string()));
    }
    return Fail(ErrorCode::kNotFound,
                fmt::format("LangBot's database {} does not exist", file.string()));
  }
  auto sqlite = SqliteSource::Open(file);
  if (!sqlite) return tl::unexpected(sqlite.error());
  return std::unique_ptr<Source>(std::move(*sqlite));
}

util::Result<LangbotData> ReadLangbot(const ImportOptions& options) {
  if (options.from.empty() && options.from_database_url.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "give --from <LangBot data directory> or --from-database-url");
  }
  LangbotData data;
  auto source = OpenSource(options, data.config_text, data.config_note);
  if (!source) return tl::unexpected(source.error());
  data.source = (*source)->Describe();
  auto snapshot = ReadSnapshot(**source);
  if (!snapshot) return tl::unexpected(snapshot.error());
  data.snapshot = std::move(*snapshot);
  return data;
}

std::string RenderRefusal(const LangbotData& data) {
  std::string out = fmt::format(
      "Import from LangBot: {} (schema version {})\nRefused: {} rows cannot be read; nothing was "
      "written (--skip-invalid imports the rest and reports these as skipped).\n\nrows that "
      "cannot be read:\n",
      data.source, data.snapshot.schema_version, data.snapshot.problems.size());
  for (const auto& p : data.snapshot.problems) {
    out += fmt::format("  - {} {}: {}\n", p.table, p.key, p.message);
  }
  return out;
}

int RunImport(const LangbotData& data, const ImportOptions& options, const ImportTarget& target,
              std::string& out, std::string& err) {
  ReportHeader header;
  header.dry_run = options.dry_run;
  header.source = data.source;
  header.config = data.config_note;
  header.schema_version = data.snapshot.schema_version;
  if (!data.snapshot.problems.empty() && !options.skip_invalid) {
    out = RenderRefusal(data);
    err = fmt::format(
        "error: {} rows of the LangBot database cannot be read; nothing was "
        "written\n",
        data.snapshot.problems.size());
    return kExitUnreadable;
  }
  const std::string& config_text = data.config_text;
  const Snapshot* snapshot = &data.snapshot;

  std::optional<ConfigMapping> mapping;
  if (!config_text.empty()) {
    auto current = config::LoadConfig(target.writers.config_file.string(), {});
    if (!current) {
      err = fmt::format("error: {}\n", current.error().message);
      return kExitError;
    }
    auto mapped = MapLangbotConfig(config_text, *current);
    if (!mapped) {
      err = fmt::format("error: {}: {}\n", header.config, mapped.error().message);
      return kExitBadSource;
    }
    mapping = std::move(*mapped);
  }

  PlanInputs in;
  in.snapshot = snapshot;
  in.config = mapping ? &*mapping : nullptr;
  in.storage = target.writers.storage;
  in.providers = target.providers;
  in.models = target.models;
  in.adapters = target.adapters;
  in.clock = target.clock;
  in.overwrite = options.overwrite;
  in.skip_invalid = options.skip_invalid;
  auto plan = BuildPlan(in);
  if (!plan) {
    err = fmt::format("error: reading this server's storage failed: {}\n", plan.error().message);
    return kExitError;
  }
  if (options.dry_run) {
    out = RenderReport(header, *plan, nullptr);
    return kExitOk;
  }
  const Applied applied = ApplyPlan(*plan, target.writers);
  out = RenderReport(header, *plan, &applied);
  if (!applied.ok) {
    err = fmt::format("error: {}; {} of {} writes of this run were undone\n", applied.failure,
                      applied.undone, applied.written);
    return kExitWriteFailed;
  }
  return kExitOk;
}

}  // namespace sb::langbot_import
