// `switchboard serve`: the core plus the HTTP server, until SIGTERM or SIGINT.
#pragma once

#include "app/core.hpp"

namespace sb::app {

// Returns the process exit code.
int Serve(const CoreOptions& options);

}  // namespace sb::app
