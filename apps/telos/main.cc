// telos: the one TelosMUD binary. Each role is a subcommand; this file parses flags and hands
// over to the role's wiring, nothing more. Settings come from TELOS_* variables (and the TOML
// file TELOS_CONFIG names); a bad one is reported by name and the process exits with code 2.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "serve.h"
#include "telos/base/config.h"
#include "version.h"

namespace {

// Reads the configuration or exits with the configuration error code.
telos::Config LoadConfigOrExit() {
  auto config = telos::Config::FromProcess();
  if (!config.ok()) {
    std::fprintf(stderr, "telos: %s\n", config.status().message().c_str());
    std::exit(telos::kExitConfigError);
  }
  return std::move(*config);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"TelosMUD: a server for persistent multiplayer text worlds"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(telos::kVersion));
  int exit_code = 0;

  auto* version = app.add_subcommand("version", "Print the version and build information");
  version->callback([] {
    std::printf("telos %s (%s build, %s)\n", telos::kVersion, telos::kBuildType, telos::kCompiler);
  });

  auto* serve = app.add_subcommand(
      "serve",
      "Run the whole game in one process: telnet (TELOS_TELNET_PORT, 4000), web client and HTTP "
      "API (TELOS_HTTP_PORT, 8080), SQLite under TELOS_DATA_DIR (./telos-data)");
  serve->callback([&exit_code] {
    const telos::Config config = LoadConfigOrExit();
    auto settings = telos::app::ReadServeSettings(config);
    if (!settings.ok()) {
      std::fprintf(stderr, "telos serve: %s\n", settings.status().message().c_str());
      exit_code = telos::kExitConfigError;
      return;
    }
    exit_code = telos::app::RunServe(*settings, config);
  });

  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
