// `switchboard import-langbot`: finds LangBot's database and config.yaml, reads everything,
// plans, and (unless a dry run or refused) writes, printing the report.
//   ImportTarget target{&storage, &providers, &models, &auth, &webhooks, &adapters, &clock, ...};
//   int code = RunImport(options, target, stdout_text, stderr_text);
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "langbot_import/apply.hpp"
#include "langbot_import/snapshot.hpp"
#include "langbot_import/source.hpp"

namespace sb::langbot_import {

struct ImportOptions {
  std::filesystem::path from;     // LangBot's data directory (or the folder holding data/)
  std::string from_database_url;  // postgresql://... instead of the SQLite file
  bool dry_run = false;
  bool overwrite = false;
  bool skip_invalid = false;
};

struct ImportTarget {
  Writers writers;  // storage, auth, webhooks, config file, file writer
  services::ProviderService* providers = nullptr;
  services::ModelService* models = nullptr;
  const domain::Catalogue* adapters = nullptr;
  const util::Clock* clock = nullptr;
};

// Exit codes, also documented in docs/import-langbot.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;        // this server's storage failed, or bad options
inline constexpr int kExitBadSource = 2;    // not LangBot's, damaged, unknown schema version
inline constexpr int kExitUnreadable = 3;   // rows cannot be read (refused; --skip-invalid)
inline constexpr int kExitWriteFailed = 4;  // a write failed; this run's writes were undone

// Everything read from LangBot, before this server's data directory is touched.
struct LangbotData {
  std::string source;       // Source::Describe()
  std::string config_note;  // the config.yaml read, or "none read"
  std::string config_text;
  Snapshot snapshot;
};

// Finds and reads LangBot's database and config.yaml. kInvalidArgument / kNotFound with a
// sentence when the source is not LangBot's, damaged, or of an unknown schema version.
util::Result<LangbotData> ReadLangbot(const ImportOptions& options);

// The report of an import refused because rows cannot be read (nothing is planned or written).
std::string RenderRefusal(const LangbotData& data);

// Plans and (unless a dry run) writes. The report goes to `out`, errors (one sentence each) to
// `err`. Returns an exit code above. Refuses (kExitUnreadable) when rows cannot be read and
// skip_invalid is not set.
int RunImport(const LangbotData& data, const ImportOptions& options, const ImportTarget& target,
              std::string& out, std::string& err);

// Opens LangBot's database for `options` (the SQLite file found from `from` and its
// config.yaml, or the PostgreSQL URL). kInvalidArgument / kNotFound with a sentence.
util::Result<std::unique_ptr<Source>> OpenSource(const ImportOptions& options,
                                                 std::string& config_text,
                                                 std::string& config_note);

}  // namespace sb::langbot_import
