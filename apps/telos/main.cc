// telos: the one TelosMUD binary. Each role is a subcommand; this file parses flags and wires
// components together, nothing more.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "version.h"

int main(int argc, char** argv) {
  CLI::App app{"TelosMUD: a server for persistent multiplayer text worlds"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(telos::kVersion));

  auto* version = app.add_subcommand("version", "Print the version and build information");
  version->callback([] {
    std::printf("telos %s (%s build, %s)\n", telos::kVersion, telos::kBuildType, telos::kCompiler);
  });

  CLI11_PARSE(app, argc, argv);
  return 0;
}
