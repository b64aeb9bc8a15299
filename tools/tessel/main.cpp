// The `tessel` executable: every subcommand is registered by the module that owns it.
#include "support/cli.hpp"

int main(int argc, char** argv) {
  return tessel::cli::run_main(argc, argv);
}
