#include "app/cli.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "app/data_dir.hpp"
#include "app/serve.hpp"
#include "config/config.hpp"
#include "langbot_import/importer.hpp"
#include "services/webhook_service.hpp"

namespace sb::app {
namespace {

void AddCommonOptions(CLI::App* cmd, CoreOptions& o, std::string& data_dir,
                      std::string& config_file) {
  cmd->add_option("--data-dir", data_dir, "data directory (config, database, secrets)")
      ->capture_default_str();
  cmd->add_option("--config", config_file, "config file (default: <data-dir>/config.yaml)");
  (void)o;
}

util::Result<std::unique_ptr<Core>> OpenCore(CoreOptions o, const std::string& data_dir,
                                             const std::string& config_file) {
  o.data_dir = data_dir;
  if (!config_file.empty()) o.config_file = config_file;
  return Core::Open(o);
}

}  // namespace

int RunCli(int argc, char** argv) {
  CLI::App app{"Switchboard: chat bots, language models and pipelines, managed over HTTP"};
  app.require_subcommand(1);
  CoreOptions options;
  std::string data_dir = "./data";
  std::string config_file;

  auto* serve = app.add_subcommand("serve", "run the server");
  AddCommonOptions(serve, options, data_dir, config_file);
  std::string host;
  int port = -1;
  serve->add_option("--host", host, "listen address (default 0.0.0.0)");
  serve->add_option("--port", port, "listen port (default 5300; 0 picks a free one)");
  ServeOptions serve_options;
  serve->add_option("--console-dir", serve_options.console_dir,
                    "serve the web console from this directory, read per request (development; "
                    "default: the console built into the binary)");

  auto* user = app.add_subcommand("user", "manage accounts");
  user->require_subcommand(1);
  auto* user_create = user->add_subcommand("create", "create an account or reset its password");
  AddCommonOptions(user_create, options, data_dir, config_file);
  std::string username;
  std::string password;
  user_create->add_option("--user", username, "account name")->required();
  user_create->add_option("--password", password,
                          "password (default: the SWITCHBOARD_PASSWORD environment variable)");

  auto* apikey = app.add_subcommand("apikey", "manage API keys");
  apikey->require_subcommand(1);
  auto* apikey_create = apikey->add_subcommand("create", "create an API key and print it");
  AddCommonOptions(apikey_create, options, data_dir, config_file);
  std::string key_name;
  std::string key_description;
  apikey_create->add_option("--name", key_name, "key name")->required();
  apikey_create->add_option("--description", key_description, "key description");

  auto* import_langbot = app.add_subcommand("import-langbot",
                                            "move in from a LangBot 4.9.5 installation "
                                            "(docs/import-langbot.md); the source is only read");
  AddCommonOptions(import_langbot, options, data_dir, config_file);
  langbot_import::ImportOptions import_options;
  std::string import_from;
  import_langbot->add_option("--from", import_from,
                             "LangBot's data directory (holding config.yaml and langbot.db)");
  import_langbot->add_option("--from-database-url", import_options.from_database_url,
                             "LangBot's PostgreSQL database (postgresql://user:pass@host/db)");
  import_langbot->add_flag("--dry-run", import_options.dry_run,
                           "print the report of what would be done; write nothing");
  import_langbot->add_flag("--overwrite", import_options.overwrite,
                           "replace records that exist here with other content");
  import_langbot->add_flag("--skip-invalid", import_options.skip_invalid,
                           "import the rest when some LangBot rows cannot be read");

  CLI11_PARSE(app, argc, argv);

  if (serve->parsed()) {
    options.data_dir = data_dir;
    if (!config_file.empty()) options.config_file = config_file;
    if (!host.empty()) options.host = host;
    if (port >= 0) options.port = port;
    return Serve(options, serve_options);
  }
  // The CLI helpers print only their result, so scripts can capture it.
  spdlog::set_level(spdlog::level::warn);
  // LangBot's side is read (and refused when it cannot be) before this server's data directory
  // is opened, so a refused import leaves no trace here.
  std::optional<langbot_import::LangbotData> langbot;
  if (import_langbot->parsed()) {
    import_options.from = import_from;
    auto read = langbot_import::ReadLangbot(import_options);
    if (!read) {
      fmt::print(stderr, "error: {}\n", read.error().message);
      return langbot_import::kExitBadSource;
    }
    if (!read->snapshot.problems.empty() && !import_options.skip_invalid) {
      fmt::print("{}", langbot_import::RenderRefusal(*read));
      fmt::print(stderr,
                 "error: {} rows of the LangBot database cannot be read; nothing was "
                 "written\n",
                 read->snapshot.problems.size());
      return langbot_import::kExitUnreadable;
    }
    langbot = std::move(*read);
  }
  // A dry run into a data directory that does not exist yet plans against a fresh one in a
  // scratch folder, so it leaves nothing behind either.
  std::filesystem::path scratch;
  // The data directory is missing, so its config is too: the backend comes from --config and the
  // environment, as it would for `serve`.
  auto shared_database = [&config_file] {
    auto config = config::LoadConfig(config_file, config::ProcessEnvironment());
    return config && config->database.postgres();
  };
  if (langbot && import_options.dry_run && !std::filesystem::exists(data_dir) &&
      shared_database()) {
    // A scratch folder's new secrets key would seal the database's shared secrets with a key no
    // instance has.
    fmt::print(stderr,
               "error: a dry run into a PostgreSQL database needs the data directory of an "
               "instance using it (for its secrets key); start `switchboard serve` once, or name "
               "an existing one with --data-dir\n");
    return 1;
  }
  if (langbot && import_options.dry_run && !std::filesystem::exists(data_dir)) {
    std::string pattern = (std::filesystem::temp_directory_path() / "sb-dry-run-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
      fmt::print(stderr, "error: cannot create a scratch folder for the dry run\n");
      return 1;
    }
    scratch = pattern;
    data_dir = (scratch / "data").string();
  }
  struct RemoveScratch {
    const std::filesystem::path& dir;
    ~RemoveScratch() {
      std::error_code ec;
      if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
  } remove_scratch{scratch};
  auto core = OpenCore(options, data_dir, config_file);
  if (!core) {
    fmt::print(stderr, "error: {}\n", core.error().message);
    return 1;
  }
  if (user_create->parsed()) {
    if (password.empty()) {
      const char* env = std::getenv("SWITCHBOARD_PASSWORD");
      if (env) password = env;
    }
    auto r = (*core)->auth().UpsertUser(username, password);
    if (!r) {
      fmt::print(stderr, "error: {}\n", r.error().message);
      return 1;
    }
    fmt::print("account '{}' is ready\n", username);
    return 0;
  }
  if (langbot) {
    services::WebhookService webhooks((*core)->storage().webhooks(), (*core)->clock());
    langbot_import::ImportTarget target;
    target.writers.storage = &(*core)->storage();
    target.writers.auth = &(*core)->auth();
    target.writers.webhooks = &webhooks;
    target.writers.config_file = (*core)->config_file();
    target.writers.write_file = WritePrivateFile;
    target.providers = &(*core)->providers();
    target.models = &(*core)->models();
    target.adapters = &(*core)->adapters();
    target.clock = &(*core)->clock();
    std::string out;
    std::string err;
    const int code = langbot_import::RunImport(*langbot, import_options, target, out, err);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    std::fwrite(err.data(), 1, err.size(), stderr);
    return code;
  }
  if (apikey_create->parsed()) {
    auto created = (*core)->auth().CreateApiKey(key_name, key_description);
    if (!created) {
      fmt::print(stderr, "error: {}\n", created.error().message);
      return 1;
    }
    fmt::print("{}\n", created->key);
    return 0;
  }
  return 2;
}

}  // namespace sb::app
