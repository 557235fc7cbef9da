// A plugin's manifest.yaml, read into a typed struct: LangBot's metadata shape (author, name,
// version, label, description, icon, spec.config) plus the `execution` section that says how to
// start the plugin's process. Every failure names the field, so an install task can say why.
//   auto manifest = ParseManifest(yaml_text);
//   if (!manifest) return manifest.error();   // kInvalidArgument "manifest: metadata.name ..."
//   manifest->command;                        // {"python3", "main.py"}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"
#include "util/json.hpp"

namespace sb::plugins {

struct PluginManifest {
  std::string author;            // ^[A-Za-z0-9_-]+$
  std::string name;              // ^[A-Za-z0-9_-]+$
  std::string version;           // dotted numbers with an optional -suffix ("1.2.0", "0.3.1-beta")
  util::JsonObject label;        // language code -> text ({"en_US": "Hello"})
  util::JsonObject description;  // language code -> text
  std::string icon;              // path inside the package, or empty
  std::string repository;
  util::JsonArray config;  // LangBot config items [{name, type, required, default, ...}]
  // argv of the plugin's process, run in the plugin's folder. The program is either a file of
  // the package (a relative path) or one of kAllowedInterpreters, looked up on PATH.
  std::vector<std::string> command;
  // execution.network: the plugin asks to reach the network; it does only when the admin also
  // allows it (PUT /plugins/{author}/{name}/sandbox). Without, it has a private loopback only.
  bool network = false;

  std::string id() const { return author + "/" + name; }
};

// Interpreters a manifest may name as its program without shipping it.
inline constexpr std::string_view kAllowedInterpreters[] = {"python3", "node", "sh", "bash"};

// Parses and validates a manifest. kInvalidArgument naming the field ("manifest:
// metadata.version must look like 1.2.3") on anything a plugin could not run with.
util::Result<PluginManifest> ParseManifest(std::string_view yaml_text);

// True for a name or author LangBot would accept (also what may appear in a URL path).
bool ValidPluginIdPart(std::string_view part);

// True for a version like 1.2.3 or 1.2.3-beta.1; such a version is also one safe path component.
bool ValidVersion(std::string_view version);

// Orders versions by their numeric parts ("1.10.0" > "1.9.2"); a -suffix sorts before the plain
// version. Negative, zero or positive like strcmp.
int CompareVersions(std::string_view a, std::string_view b);

}  // namespace sb::plugins
