// Content hot reload across a fleet (issue 25 item 6; docs/operating.md "Reloading content").
//
// Two parts, transport-free but for the Bus:
//   - PackReloadAgent, one per world, answers reload requests on "<prefix>.reload.<shard>":
//       check  reads the pack from the world's own content folder (LoadPack, on the blocking
//              runner) and answers whether it could apply it: valid (else its file:line
//              problems), the hash the coordinator asked for, a shape a reload can take
//              (DiffPacks), and dependencies that allow it (the degradation ladder: with the
//              character store down a reload is refused, since rebuilding a zone saves
//              everyone in it).
//       apply  the same checks, then WorldHost::Reload; answers once every changed zone here is
//              rebuilt, with what was rebuilt.
//   - ReloadFleet, the coordinator that `telos ctl reload`, SIGHUP on `telos serve` and any
//     world run: it refuses while the bus is down, asks every live shard in the directory to
//     check, and only when every one agrees records the change in the directory (both hashes:
//     the fleet is mid-reload), asks every shard to apply, and records the new hash alone once
//     all have. A refusal at the check changes nothing anywhere.
//
// The directory's record is what the fail-closed pack-divergence check at boot reads
// (PackAccepted below, WorldShard::FindPackDivergence): mid-reload both packs are accepted; after
// it a world with the old pack is refused.
//
// Threads: the agent's bus handler does no blocking work (it hands it to the runner); its
// answers go out from a blocking thread or a zone executor. ReloadFleet blocks its caller for up
// to the two timeouts (limits::kReloadCheckTimeoutMs, kReloadApplyTimeoutMs): never call it on
// an event loop or a zone executor.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "telos/base/blocking.h"
#include "telos/base/in_flight_gate.h"
#include "telos/base/log.h"
#include "telos/base/status.h"
#include "telos/bus/bus.h"
#include "telos/directory/directory.h"
#include "telos/shard/fleet_messages.h"
#include "telos/world/content.h"
#include "telos/world/world_host.h"

namespace telos::shard {

// The subject a world's agent listens on.
std::string ReloadSubject(const std::string& subject_prefix, const std::string& shard_id);

// Whether a world whose pack hash is `ours` may join a fleet whose directory records `version`
// (nullopt: no reload ever recorded one) and whose live peers run `peers` (the hashes of those
// that answered). `alone`: no other world is registered, so the record speaks for nobody
// running (a whole fleet restarted on new content) and is not held against `ours`. Empty when
// accepted, else why not.
std::string PackRefusal(const std::string& ours,
                        const std::optional<directory::PackVersion>& version,
                        const std::vector<std::string>& peers, bool alone);

struct PackReloadAgentOptions {
  std::string shard_id;
  std::string subject_prefix = "telos.telos";
  std::string content_dir = "content";
};

class PackReloadAgent {
 public:
  // Empty when a reload may run now; else the reason it may not (the degradation ladder).
  using Refusal = std::function<std::string()>;
  // Every reference outlives the agent.
  PackReloadAgent(PackReloadAgentOptions options, bus::Bus& bus, world::WorldHost& host,
                  BlockingRunner blocking, Refusal refusal, Logger& log);
  ~PackReloadAgent();

  // Subscribes. Works while the bus is down (the subscription takes effect on reconnect).
  Status Start();
  // Unsubscribes and waits for the work already handed to the blocking runner, so once it
  // returns no reload starts here (one that started before is the host's: WorldHost::StopZone
  // waits for its rebuild). A request in flight still gets its answer; one whose work had not
  // started is refused. REQUIRES: not called on the blocking runner.
  void Stop();

  // One request, as if it came off the bus; `answer` gets the reply (any thread, once).
  void Handle(const ReloadRequest& request, std::function<void(ReloadAnswer)> answer);

 private:
  ReloadAnswer Check(const ReloadRequest& request, std::shared_ptr<const world::Pack>* pack);

  const PackReloadAgentOptions options_;
  bus::Bus& bus_;
  world::WorldHost& host_;
  BlockingRunner blocking_;
  Refusal refusal_;
  Logger& log_;
  std::mutex mu_;  // guards subscription_ only
  std::unique_ptr<bus::Subscription> subscription_;
  // Held by the blocking work of each request: Stop() waits for it.
  std::shared_ptr<InFlightGate> in_flight_ = InFlightGate::Make();
};

// What a fleet reload did: the verdict, and one line (or more) per world saying what it said.
//   Ok                  every live world runs the new pack.
//   Unavailable         the bus is down or the directory cannot be read: hot reload is disabled
//                       (the degradation ladder); nothing was asked.
//   FailedPrecondition  some world refused at the check (an invalid or different pack on its
//                       disk, a shape a reload cannot take, its database down), there is no
//                       live world, or another reload moved the directory's record meanwhile:
//                       nothing changed anywhere.
//   Internal            some world failed to apply after all had agreed; the directory keeps
//                       both hashes, so the fleet is still accepted as mid-reload: run it again.
struct FleetReloadReport {
  Status status;
  std::vector<std::string> lines;
};

// Reloads every live world of the fleet onto `pack`, which the caller has validated; its hash
// is what every world must find on its own disk.
FleetReloadReport ReloadFleet(bus::Bus& bus, directory::Directory& directory,
                              const world::Pack& pack, const std::string& subject_prefix,
                              Logger& log);

}  // namespace telos::shard
