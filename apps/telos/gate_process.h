// The parts of a fleet gate, wired together: FleetWorldLink to the world shards, the Gate's
// login and play sessions over an AccountDesk, and the FrontDoor listeners: /api/health and
// /api/who beside the web client on the players' port, /metrics, /api/cluster and /api/health
// on the admin listener. `telos gate` runs one with the remote account service; `telos serve`
// runs one with its in-process accounts.
//
// /api/health answers 503 "stopping" once Stop() has begun (a load balancer takes the gate out
// while its players are told); the owner's health_extra may say the role cannot serve too.
#pragma once

#include <atomic>
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
  // `health_extra` (may be null) adds members to /api/health, and when it reports the role
  // unable to serve, so does /api/health (serve: the world in this process). It runs on io
  // threads and must not block.
  GateProcess(GateProcessOptions options, const world::Pack& pack, account::AccountDesk& desk,
              directory::Directory& directory, boost::asio::io_context& io, BlockingRunner blocking,
              const Clock& clock, Logger& log, Metrics& metrics,
              std::function<net::HealthReport()> health_extra = nullptr);

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
  uint16_t admin_port() const { return front_.admin_port(); }

 private:
  net::HealthReport Health(const std::function<net::HealthReport()>& extra) const;

  const GateProcessOptions options_;
  gate::FleetWorldLink link_;
  gate::Gate gate_;
  FrontDoor front_;
  std::function<std::vector<world::WhoEntry>()> who_;
  bool stopped_ = false;
  std::atomic<bool> stopping_{false};  // read by /api/health on io threads
};

}  // namespace telos::app
