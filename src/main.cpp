#include "app/cli.hpp"

int main(int argc, char** argv) { return sb::app::RunCli(argc, argv); }
