// The command line: `serve`, `user create`, `apikey create`. Returns the process exit code.
#pragma once

namespace sb::app {

int RunCli(int argc, char** argv);

}  // namespace sb::app
