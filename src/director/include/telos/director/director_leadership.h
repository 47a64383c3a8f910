// DirectorLeadership: one director's claim on its scope's leader lease, with no transport.
//
// Every director of a scope campaigns for the directory's leader lease of that scope; one wins
// and leads, the others are warm standbys. The owner drives it by calling Step() and calling
// again after the delay Step() returns (a timer thread in the process, a loop in tests); Step
// never sleeps. What one Step does:
//   - a standby campaigns. Losing to a live leader is normal: it reads the leader's time left
//     and comes back just after that lease would lapse (never later than the renew interval),
//     so a standby takes over within the TTL plus kLeaderTakeoverSlackMs of the leader's last
//     renewal, and so of its death.
//   - a leader renews every renew_interval_ms (TTL/3). A refused renewal (the lease is gone or
//     someone else's) steps down at once. A renewal that cannot be confirmed (the directory is
//     unreachable, or the answer was lost) is retried every kLeaderRetryMsDefault until the
//     leader's own deadline, and then it steps down.
//
// The deadline. A grant of ttl_ms was judged by the directory after the request left, so the
// lease cannot lapse before (send time + ttl_ms) on our clock. The leader stops leading at that
// instant minus step_down_margin_ms (room for the two clocks' rates to differ). is_leader()
// reads the clock itself, so it turns false at the deadline even if Step() is late (a paused
// process): whoever asks before acting stops acting at once.
//
// The epoch. epoch() is the leader lease's term while leading (0 otherwise); it grows by one
// with each new tenure of the scope. It rides on everything the leader writes: the directory's
// IssueDirective takes (scope, epoch) and refuses it with kFailedPrecondition unless that epoch
// is the scope's live lease term, checked atomically with the write. That is the fence; a
// deposed leader that has not yet noticed (a paused process) cannot issue a directive. Checking
// is_leader() first still saves a round trip that would be refused.
//
// Log lines: `director leadership changed` (scope, leader, epoch) when this director wins or
// first sees another leader; `director lease campaign failed` (scope, candidate, error) when a
// campaign could not reach the directory; `stepping down` (scope, candidate, epoch, reason).
//
// Ownership: borrows the directory, the clock and the logger, which must outlive it.
// Threads: Step() and Resign() from one thread at a time; is_leader(), epoch() and
// observed_leader() from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/status.h"
#include "telos/directory/directory.h"

namespace telos::director {

inline constexpr int64_t kLeaderStepDownMarginMsDefault = 1'000;
inline constexpr int64_t kLeaderRetryMsDefault = 500;  // after a call that could not be confirmed
// A standby comes back this long after the leader's lease would lapse, so that the lease has
// lapsed by the directory's clock too.
inline constexpr int64_t kLeaderTakeoverSlackMs = 100;

struct LeadershipConfig {
  std::string scope;      // TELOS_DIRECTOR_SCOPE
  std::string candidate;  // this director's id, unique in the scope
  int64_t lease_ttl_ms = directory::kLeaderLeaseTtlMsDefault;
  int64_t renew_interval_ms = directory::RenewIntervalMs(directory::kLeaderLeaseTtlMsDefault);
  int64_t step_down_margin_ms = kLeaderStepDownMarginMsDefault;
  int64_t retry_ms = kLeaderRetryMsDefault;
};

// OK, or InvalidArgument naming the first bad field: scope and candidate non-empty; ttl in the
// directory's range; 0 < renew interval and retry; 0 <= margin; renew interval + margin < ttl
// (else a healthy leader would step down between two renewals).
Status ValidateLeadershipConfig(const LeadershipConfig& config);

class DirectorLeadership {
 public:
  // REQUIRES: ValidateLeadershipConfig(config).ok().
  DirectorLeadership(directory::Directory& directory, const Clock& clock, Logger& logger,
                     LeadershipConfig config);

  DirectorLeadership(const DirectorLeadership&) = delete;
  DirectorLeadership& operator=(const DirectorLeadership&) = delete;

  // Campaigns or renews as due; returns the milliseconds until it should be called again.
  int64_t Step();

  // Gives the lease up at once when leading (a clean stop), so a standby need not wait out the
  // TTL. The directory may be unreachable: this director stops leading either way.
  void Resign();

  // True while this director holds the lease and its deadline has not passed.
  bool is_leader() const;
  // The term while is_leader(), else 0.
  uint64_t epoch() const;
  // The leader this director last saw (itself included) and its term; empty before any.
  std::string observed_leader() const;

  const LeadershipConfig& config() const { return config_; }

 private:
  int64_t StepLeader(Instant now);
  int64_t StepStandby(Instant now);
  void BecomeLeader(Instant sent, const directory::LeaseGrant& grant);
  void StepDown(std::string_view reason);
  void Observe(const std::string& leader, uint64_t term);
  int64_t MsUntil(Instant now, Instant then) const;

  directory::Directory& directory_;
  const Clock& clock_;
  Logger& logger_;
  const LeadershipConfig config_;

  mutable std::mutex mu_;       // guards the fields below; never held across a directory call
  bool leading_ = false;        // GUARDED_BY(mu_)
  uint64_t term_ = 0;           // GUARDED_BY(mu_)
  Instant deadline_{};          // GUARDED_BY(mu_): stop leading at this instant
  Instant next_renew_{};        // GUARDED_BY(mu_)
  std::string observed_;        // GUARDED_BY(mu_)
  uint64_t observed_term_ = 0;  // GUARDED_BY(mu_)
};

}  // namespace telos::director
