// `telos gate`: a stateless front door of a fleet — telnet, the web client and HTTP API, login
// through the account service, and each player's session routed over gRPC to the world shard
// owning their zone.
#pragma once

#include <cstdint>
#include <string>

#include "role_common.h"
#include "telos/base/config.h"
#include "telos/base/status.h"

namespace telos::app {

struct GateRoleSettings {
  FrontDoorSettings front;
  std::string gate_id;  // empty: gate-<hostname>-<pid>
  std::string account_target;
  std::string caller_token;
  std::string gate_token;  // TELOS_GATE_TOKEN: presented to the worlds on every Play stream
  std::string content_dir = "content";
  int64_t io_threads = 2;
  int64_t blocking_threads = 8;
  int64_t link_dead_ms = 0;      // 0: the default from limits.h
  int64_t login_timeout_ms = 0;  // 0: the default from limits.h
  int64_t route_wait_ms = 0;     // 0: the link's default (20 s)
  bool allow_insecure = false;   // TELOS_ALLOW_INSECURE: run without the caller or gate token
};

Result<GateRoleSettings> ReadGateRoleSettings(const Config& config);
int RunGateRole(const GateRoleSettings& settings, const Config& config);

}  // namespace telos::app
