// ZoneLeaseKeeper: how a world shard comes to host zones, and stops hosting them.
//
// Claim from pool (DESIGN.md section 4, invariants 1-3). On boot the shard registers its
// id -> endpoint (Register), then each pass (Tick) walks its configured zone pool in sorted order
// and claims every free zone with Directory::ClaimZone. It hosts exactly what it wins: a won zone
// is handed to ZoneHosting::StartZone with its lease epoch (the fencing token). A shard that wins
// nothing is a warm standby: registered, heartbeating, hosting nothing, and still walking the
// pool every pass, so it adopts an orphaned zone as soon as the dead owner's lease lapses.
// Held leases are renewed every pass; the thread (Start) runs a pass every
// RenewIntervalMs(lease_ttl_ms) (TTL/3), or sooner if the shard TTL is the shorter one, and also
// just after the lease of a pool zone a peer holds would lapse (read from the directory when
// the claim found it held), so a crashed owner's zone is adopted within its TTL, not a pass
// interval later.
//
// The local fence (invariant 1). Each held lease has a local deadline: clock.Now() read *before*
// the claim or renew was sent, plus the ttl_ms the directory granted, so it can only be earlier
// than the directory's own expiry. A renew that is refused (kFailedPrecondition: lapsed, moved,
// re-granted) stops the zone at once. A renew that cannot be confirmed (kUnavailable,
// kUnknownResult, anything else) keeps the zone only while now < deadline - lease_ttl_ms/6; the
// thread also wakes at that instant, so a zone nobody could confirm is stopped before its lease
// could have expired even if the directory stays silent. The bound holds as long as one
// directory call returns within lease_ttl_ms/6 (the Redis backend's command timeout must be
// shorter than that).
//
// Single-shard mode (the degradation ladder). When the renewals that could not be confirmed
// failed because the directory is unreachable (kUnavailable: nothing was sent, so nobody else
// can have been granted anything through this call), the zone is not stopped at its fence but
// suspended: ZoneHosting::SuspendZone keeps it running for the players inside while the host
// writes nothing durable for it (invariant 1 holds: the zone stops writing before the lease
// could have expired). Each pass then tries to confirm it again: a renewal at the old epoch, or
// once that lease has lapsed (or the directory lost its data) a fresh claim at a new epoch,
// resumes it (ResumeZone); finding it held by a peer stops it (StopZone), and whatever it did
// while suspended is dropped by the host. Any other failure (an answer that never came:
// kUnknownResult, a timeout) stops the zone at its fence as before.
//
// Re-adoption (invariant 3): a zone that was lost and is won back is a new tenure with a new
// epoch; it is started again and renewed at that epoch like any other.
//
// Shard id (invariant 2): Register refuses an id held live by another endpoint. If a heartbeat
// finds the registration lapsed the keeper registers again; if it finds another endpoint holding
// the id, it stops every zone (leases are held by id, so the other process could renew them) and
// claims nothing until the id is its own again.
//
// Ownership: borrows the directory, the host, the clock, the logger and the metrics; all must
// outlive the keeper. The thread measures time with `clock`, so it needs a clock that moves with
// real time (SystemClock); with a ManualClock drive the keeper by calling Tick() by hand.
//
// Threads: ZoneHosting is only ever called from the thread running passes (the keeper's thread
// after Start(); the owner's before it, or in tests) and never with a keeper lock held, so the
// host may call held() from StartZone/StopZone. Adopt(), which a peer's drain calls on a gRPC
// or pool thread, hands its work to that thread and waits for it. held(), standby(), Forget() and
// SetOccupancySource() may be called from any thread. Register, Tick, Start and Stop belong to
// the owner; Tick must not run while the thread does.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/base/status.h"
#include "telos/directory/directory.h"

namespace telos::shard {

// What the keeper drives: the world host. Both are called from the keeper's thread.
class ZoneHosting {
 public:
  virtual ~ZoneHosting() = default;
  // Start hosting a zone just won at lease `epoch`. A non-OK status releases the lease again.
  virtual Status StartZone(const std::string& zone, uint64_t epoch) = 0;
  // Stop hosting now (lease lost or not confirmable). Must not block for long.
  virtual void StopZone(const std::string& zone, const std::string& why) = 0;
  // The directory is unreachable and the lease can no longer be confirmed: keep the zone running
  // for its players, but make no durable write for it until ResumeZone (or drop them at
  // StopZone). Must not block for long.
  virtual void SuspendZone(const std::string& zone, const std::string& why) = 0;
  // A suspended zone's lease is confirmed again, at `epoch` (new if it was re-won). A non-OK
  // status (the epoch is stale: see EpochFloor) releases the lease and keeps the zone suspended;
  // the next pass claims it again.
  virtual Status ResumeZone(const std::string& zone, uint64_t epoch) = 0;
  // The lowest epoch a new tenure of `zone` may have (0: no floor): one above the durable zone
  // fence when StartZone found it above the epoch the directory granted — the directory lost
  // its epochs (an empty Redis) and would otherwise hand out stale ones.
  virtual uint64_t EpochFloor(const std::string& /*zone*/) { return 0; }
};

struct ZoneLeaseKeeperOptions {
  std::string shard_id, endpoint;
  // Zones this shard may host. Order and duplicates do not matter: they are claimed sorted.
  std::vector<std::string> pool;
  // REQUIRES: lease_ttl_ms >= 6 and shard_ttl_ms >= 3 (both fences need whole milliseconds).
  int64_t lease_ttl_ms = directory::kZoneLeaseTtlMsDefault;
  int64_t shard_ttl_ms = directory::kShardTtlMsDefault;
};

class ZoneLeaseKeeper {
 public:
  // How long after a peer's lease would lapse the keeper tries to claim it.
  static constexpr int64_t kExpiryMarginMs = 20;

  // REQUIRES: options.shard_id and options.endpoint non-empty; the TTL bounds above.
  ZoneLeaseKeeper(ZoneLeaseKeeperOptions options, directory::Directory& directory,
                  ZoneHosting& hosting, const Clock& clock, Logger& log, Metrics& metrics);
  // Stops the thread if it runs, without releasing (the leases lapse on their own).
  ~ZoneLeaseKeeper();

  ZoneLeaseKeeper(const ZoneLeaseKeeper&) = delete;
  ZoneLeaseKeeper& operator=(const ZoneLeaseKeeper&) = delete;

  // Registers the shard. AlreadyExists (message: "shard id <id> is already registered by a live
  // shard at <endpoint>") when a live shard holds the id from another endpoint. Unavailable when
  // the directory is down. Registering again from the same endpoint simply refreshes.
  Status Register();

  // One pass: heartbeat the registration, renew held leases (stop any that fails with
  // FailedPrecondition — lost — and any whose locally-computed deadline is within
  // lease_ttl_ms/6 of passing because renewals keep failing with Unavailable), claim free pool
  // zones (Conflict = held by a live peer: skip quietly), report occupancy if a callback is set.
  // A zone stopped in a pass is not claimed again in that same pass; while another endpoint
  // holds the shard id nothing is renewed, claimed or reported. Returns nothing; logs.
  // REQUIRES: not concurrently with itself or with the thread started by Start().
  void Tick();

  // Runs Tick() every RenewIntervalMs(min(lease_ttl_ms, shard_ttl_ms)) on its own thread, the
  // first one at once, and enforces the local fences in between, until Stop().
  // REQUIRES: not running.
  void Start();

  // Stops the thread (waiting for the pass in flight); if `release`, releases every held lease
  // (ReleaseZone) and deregisters the shard. StopZone is not called: with `release`, the owner
  // must already have stopped (drained) every held zone, since a peer may claim it at once.
  // Idempotent; fine without Start().
  void Stop(bool release);

  // Held zones with epochs (thread-safe snapshot), and whether the shard is a standby (no zones,
  // held or suspended).
  std::map<std::string, uint64_t> held() const;
  bool standby() const;
  // Zones running in single-shard mode: their leases could not be confirmed (directory
  // unreachable), so they write nothing until confirmed again. By the epoch last held.
  std::map<std::string, uint64_t> suspended() const;
  // When the thread will next try to claim a pool zone a peer holds: just after the peer's
  // lease would lapse if it is not renewed. Empty when no such zone is watched.
  std::optional<Instant> EarliestWatchedExpiry() const;

  // Takes over a zone whose lease a peer has just moved to this shard at `epoch`: confirms it
  // with a renewal, starts hosting it and keeps renewing it. FailedPrecondition when the
  // directory says the lease is not this shard's at that epoch. Thread-safe: while the thread
  // runs, it does the adoption (between passes) and this waits, up to lease_ttl_ms
  // (DeadlineExceeded); Unavailable once the keeper is stopping.
  Status Adopt(const std::string& zone, uint64_t epoch);

  // Gives up one zone voluntarily (e.g. after a handoff of the lease); no StopZone call, no
  // directory call. Meant for a lease that has already moved away: if this shard still holds it,
  // the next pass claims it back (same epoch) and starts it again.
  void Forget(const std::string& zone);

  // Optional: per-zone player counts to report with ReportOccupancy each tick. Called from the
  // pass, without keeper locks held.
  void SetOccupancySource(std::function<std::vector<directory::ZoneCount>()> source);

 private:
  struct Lease {
    uint64_t epoch = 0;
    Instant deadline;  // conservative: local send time + granted ttl
    // Why the last renewal went unconfirmed (kOk after a confirmed one): decides between
    // suspending and stopping at the fence.
    StatusCode last_failure = StatusCode::kOk;
  };
  enum class Registration { kOk, kIdTaken, kUnknown };

  Registration Heartbeat();
  // Records a lease won (or adopted) at `epoch`, granted `ttl_ms` as of `sent`.
  void Hold(const std::string& zone, uint64_t epoch, Instant sent, int64_t ttl_ms, bool adopted);
  void RenewHeld(Instant pass_start, std::set<std::string>& stopped);
  // Tries to confirm every suspended zone again: renew, else claim anew, else stop.
  void ReconfirmSuspended(std::set<std::string>& stopped);
  // The zone reached its fence unconfirmed: suspended when the directory was unreachable,
  // stopped otherwise. False if it was no longer held at `epoch`.
  bool FenceReached(const std::string& zone, const Lease& lease);
  void ClaimFree(std::set<std::string>& stopped);
  // A pool zone is held by a live peer: remember when its lease would lapse, so the thread
  // runs a pass right then instead of up to a pass interval later (an orphan is adopted within
  // lease TTL plus a few milliseconds of the owner's last renewal).
  void WatchExpiry(const std::string& zone);
  void ReportOccupancy();
  // Stops every held zone whose fence instant (deadline - lease_ttl_ms/6) has passed, without
  // asking the directory. Returns the zones stopped.
  std::vector<std::string> EnforceFences();
  // Drops `zone` if it is still held at `epoch`, then stops it. False if it was no longer held
  // (forgotten meanwhile): no StopZone then.
  bool DropAndStop(const std::string& zone, uint64_t epoch, const std::string& why, bool fence);
  void StopAll(const std::string& why);
  void NoteStandby(bool claim_attempted);
  Instant FenceOf(const Lease& lease) const;
  std::optional<Instant> EarliestFence() const;
  void Run();
  // A peer's drain handing this shard a zone (Adopt), done by the thread running passes.
  struct Adoption {
    std::string zone;
    uint64_t epoch = 0;
    std::promise<Status> done;
  };
  void RunAdoptions();
  Status AdoptNow(const std::string& zone, uint64_t epoch);

  const ZoneLeaseKeeperOptions options_;
  const std::vector<std::string> pool_;  // sorted, unique
  directory::Directory& directory_;
  ZoneHosting& hosting_;
  const Clock& clock_;
  Logger& log_;
  prometheus::Gauge& zones_held_;
  prometheus::Counter& claims_total_;
  prometheus::Counter& losses_total_;

  // Pass-local state: touched only by the thread running passes.
  std::optional<bool> standby_logged_;  // the standby state last logged, if any
  std::atomic<bool> in_pass_{false};    // catches a Tick racing the thread (a bug)

  mutable std::mutex mu_;  // small: guards the fields below, never held across a call out
  std::map<std::string, Lease> held_;                             // GUARDED_BY(mu_)
  std::map<std::string, uint64_t> suspended_;                     // GUARDED_BY(mu_)
  std::map<std::string, Instant> watched_expiry_;                 // GUARDED_BY(mu_)
  std::function<std::vector<directory::ZoneCount>()> occupancy_;  // GUARDED_BY(mu_)
  bool stopping_ = false;                                         // GUARDED_BY(mu_)
  bool running_ = false;  // GUARDED_BY(mu_); the thread runs passes (Start() until it ends)
  std::deque<std::shared_ptr<Adoption>> adoptions_;  // GUARDED_BY(mu_)
  std::condition_variable wake_;

  std::thread thread_;  // owner thread only
};

}  // namespace telos::shard
