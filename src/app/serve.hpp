// `switchboard serve`: the core plus the HTTP server, until SIGTERM or SIGINT.
#pragma once

#include <filesystem>

#include "app/core.hpp"

namespace sb::app {

struct ServeOptions {
  // Serve the web console from this directory, read per request (development); empty: the
  // console compiled into the binary.
  std::filesystem::path console_dir;
};

// Returns the process exit code.
int Serve(const CoreOptions& options, const ServeOptions& serve_options = {});

}  // namespace sb::app
