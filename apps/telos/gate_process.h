// The parts of a fleet gate, wired together: FleetWorldLink to the world shards, the Gate's
// login and play sessions over an AccountDesk, and the FrontDoor listeners with /api/cluster and
// /api/who. `telos gate` runs one with the remote account service; `telos serve` joining a fleet
// runs one with its in-process accounts.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "role_common.h"
#include "telos/account/account_desk.h"
#include "telos/gate/fleet_world_link.h"
#include "telos/gate/gate.h"
#include "telos/world/content.h"

namespace telos::app {

struct GateProcessOptions {
  FrontDoorSettings front;
  std::string gate_id;
  std::string gate_token;        // presented on every Play stream (FleetLinkOptions)
  std::string role = "gate";     // named in /api/health and /api/cluster
  int64_t link_dead_ms = 0;      // 0: the default from limits.h
  int64_t login_timeout_ms = 0;  // 0: the default from limits.h
  int64_t route_wait_ms = 0;     // 0: FleetLinkOptions' default
};

class GateProcess {
 public:
  // `health_extra` adds `"key":value` members to /api/health (may be null).
  GateProcess(GateProcessOptions options, const world::Pack& pack, account::AccountDesk& desk,
              directory::Directory& directory, boost::asio::io_context& io, BlockingRunner blocking,
              const Clock& clock, Logger& log, Metrics& metrics,
              std::function<std::string()> health_extra = nullptr);

  net::HttpServer& http() { return front_.http(); }
  // Who /api/who lists when the world is in this process (its roster knows levels and zones);
  // unset, the link's sessions. REQUIRES: before Start().
  void SetWho(std::function<std::vector<world::WhoEntry>()> who) { who_ = std::move(who); }
  // A world shard of this process, reached in memory at `endpoint`. REQUIRES: before Start().
  void AddInProcessShard(const std::string& endpoint, rpc::InProcessPlay& shard) {
    link_.AddInProcessShard(endpoint, shard);
  }
  Status Start() { return front_.Start(); }
  // Tells every player, refuses logins, closes the shard streams and the listeners.
  void Stop(const std::string& message);
  uint16_t telnet_port() const { return front_.telnet_port(); }
  uint16_t http_port() const { return front_.http_port(); }

 private:
  const GateProcessOptions options_;
  gate::FleetWorldLink link_;
  gate::Gate gate_;
  FrontDoor front_;
  std::function<std::vector<world::WhoEntry>()> who_;
  bool stopped_ = false;
};

}  // namespace telos::app
