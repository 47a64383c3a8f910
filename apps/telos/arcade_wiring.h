// The arcade in a process that runs a world and a gate (`telos serve`, issue 27): the SQLite
// ledger in the data directory's database, one arcade::Casino driving the crash and dice games
// on the real clock, the world's casino commands (world::ArcadePort) on it, the frames as text
// and GMCP Arcade.Frame for the players in the casino's rooms, and the HTTP API
// (arcade_http.h). The logic is in src/arcade; this file only connects it.
//
// The house secret the chains are generated from is kept in <data dir>/arcade-house.secret
// (created on first start, mode 0600): the same secret gives the same chains, so the chain
// positions the ledger keeps continue across restarts and no round hash is ever replayed.
//
// Lifecycle: Open (before the world starts: the port is set then), Start(to_casino) once the
// world runs, Stop before the world stops (the round under way is refunded).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "telos/arcade/casino.h"
#include "telos/arcade/frame_text.h"
#include "telos/arcade/ledger.h"
#include "telos/base/blocking.h"
#include "telos/base/clock.h"
#include "telos/base/config.h"
#include "telos/base/log.h"
#include "telos/base/status.h"
#include "telos/world/ports.h"

namespace telos::app {

struct ArcadeSettings {
  bool enabled = true;  // TELOS_ARCADE
  // TELOS_ARCADE_SEED: the public seed every outcome is salted with (outcomes.h). It must be
  // fixed after the chains' ends are published; an operator sets it to a value announced later
  // by someone else (a block hash, a newspaper's date line).
  std::string public_seed = "telosmud arcade public seed 1";
};
// InvalidArgument naming the variable.
Result<ArcadeSettings> ReadArcadeSettings(const Config& config);

// The house secret in `data_dir`, created (32 random bytes, hex) when missing.
Result<std::string> LoadOrCreateHouseSecret(const std::string& data_dir);

// The games `serve` runs: crash and dice with the shipped timings.
arcade::CasinoOptions ServeCasinoOptions(const ArcadeSettings& settings, std::string house_secret);

using CasinoSink = std::function<void(const std::string& text, const world::OutputEvent& event)>;

class ArcadeWiring {
 public:
  // Opens the SQLite ledger at `db_path` and creates the casino (its chains generated).
  static Result<std::unique_ptr<ArcadeWiring>> Open(const ArcadeSettings& settings,
                                                    const std::string& db_path,
                                                    const std::string& data_dir,
                                                    BlockingRunner blocking, const Clock& clock,
                                                    Logger& log);
  ~ArcadeWiring();

  world::ArcadePort& port() { return *port_; }
  arcade::Casino& casino() { return *casino_; }
  // Starts the games; every frame's news goes to `to_casino` (on the casino's thread).
  void Start(CasinoSink to_casino);
  void Stop();

 private:
  ArcadeWiring() = default;
  void OnFrame(const arcade::Frame& frame);

  const Clock* clock_ = nullptr;
  std::unique_ptr<arcade::Ledger> ledger_;
  std::unique_ptr<arcade::Casino> casino_;
  std::unique_ptr<world::ArcadePort> port_;
  std::map<std::string, arcade::FrameText> texts_;  // by game; the casino thread's
  CasinoSink to_casino_;                            // set before Start
};

}  // namespace telos::app
