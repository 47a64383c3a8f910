// DirectorLeadership: campaign, renew, step down (see the header).
#include "telos/director/director_leadership.h"

#include <algorithm>

namespace telos::director {

Status ValidateLeadershipConfig(const LeadershipConfig& config) {
  if (config.scope.empty()) return Status::InvalidArgument("scope is empty");
  if (config.candidate.empty()) return Status::InvalidArgument("candidate is empty");
  if (config.lease_ttl_ms < directory::kTtlMsMin || config.lease_ttl_ms > directory::kTtlMsMax) {
    return Status::InvalidArgument("lease_ttl_ms out of range");
  }
  if (config.renew_interval_ms <= 0) return Status::InvalidArgument("renew_interval_ms <= 0");
  if (config.retry_ms <= 0) return Status::InvalidArgument("retry_ms <= 0");
  if (config.step_down_margin_ms < 0) return Status::InvalidArgument("step_down_margin_ms < 0");
  if (config.renew_interval_ms + config.step_down_margin_ms >= config.lease_ttl_ms) {
    return Status::InvalidArgument(
        "renew_interval_ms + step_down_margin_ms must stay below lease_ttl_ms");
  }
  return Status::Ok();
}

DirectorLeadership::DirectorLeadership(directory::Directory& directory, const Clock& clock,
                                       Logger& logger, LeadershipConfig config)
    : directory_(directory), clock_(clock), logger_(logger), config_(std::move(config)) {
  RELEASE_ASSERT(ValidateLeadershipConfig(config_).ok(), "DirectorLeadership needs a valid config");
}

bool DirectorLeadership::is_leader() const {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  return leading_ && now < deadline_;
}

uint64_t DirectorLeadership::epoch() const {
  const Instant now = clock_.Now();
  std::lock_guard lock(mu_);
  return leading_ && now < deadline_ ? term_ : 0;
}

std::string DirectorLeadership::observed_leader() const {
  std::lock_guard lock(mu_);
  return observed_;
}

int64_t DirectorLeadership::MsUntil(Instant now, Instant then) const {
  return std::max<int64_t>(0, ElapsedMs(now, then));
}

int64_t DirectorLeadership::Step() {
  const Instant now = clock_.Now();
  bool leading;
  {
    std::lock_guard lock(mu_);
    leading = leading_;
  }
  return leading ? StepLeader(now) : StepStandby(now);
}

int64_t DirectorLeadership::StepLeader(Instant now) {
  uint64_t term;
  Instant deadline;
  Instant next_renew;
  {
    std::lock_guard lock(mu_);
    term = term_;
    deadline = deadline_;
    next_renew = next_renew_;
  }
  if (now >= deadline) {
    // Whatever the directory thinks, the lease may have lapsed by now: someone else may lead.
    StepDown("lease not confirmed before it could have expired");
    return 0;
  }
  if (now < next_renew) return MsUntil(now, std::min(next_renew, deadline));

  Result<directory::LeaseGrant> renewed =
      directory_.RenewLeadership(config_.scope, config_.candidate, term, config_.lease_ttl_ms);
  const Instant after = clock_.Now();
  if (renewed.ok()) {
    BecomeLeader(now, *renewed);
    std::lock_guard lock(mu_);
    if (after >= deadline_) return 0;  // the answer came too late to count; step down next
    return MsUntil(after, std::min(next_renew_, deadline_));
  }
  if (renewed.status().code() == StatusCode::kFailedPrecondition) {
    StepDown("lease lost: " + renewed.status().message());
    return 0;
  }
  // Unreachable or unknown: keep leading until the deadline, retrying.
  logger_.Warn("director lease renewal failed", {{"scope", config_.scope},
                                                 {"candidate", config_.candidate},
                                                 {"epoch", term},
                                                 {"error", renewed.status().ToString()},
                                                 {"deadline_in_ms", MsUntil(after, deadline)}});
  if (after >= deadline) {
    StepDown("lease not confirmed before it could have expired");
    return 0;
  }
  {
    std::lock_guard lock(mu_);
    next_renew_ = after + Millis(config_.retry_ms);
  }
  return std::min(config_.retry_ms, MsUntil(after, deadline));
}

int64_t DirectorLeadership::StepStandby(Instant now) {
  Result<directory::LeaseGrant> won =
      directory_.Campaign(config_.scope, config_.candidate, config_.lease_ttl_ms);
  if (won.ok()) {
    BecomeLeader(now, *won);
    const Instant after = clock_.Now();
    std::lock_guard lock(mu_);
    return MsUntil(after, std::min(next_renew_, deadline_));
  }
  if (won.status().code() != StatusCode::kConflict) {
    logger_.Warn("director lease campaign failed", {{"scope", config_.scope},
                                                    {"candidate", config_.candidate},
                                                    {"error", won.status().ToString()}});
    return config_.retry_ms;
  }
  // Someone else leads: come back just after their lease would lapse.
  Result<std::optional<directory::Leader>> leader = directory_.LeaderOf(config_.scope);
  if (!leader.ok()) {
    logger_.Warn("director lease campaign failed", {{"scope", config_.scope},
                                                    {"candidate", config_.candidate},
                                                    {"error", leader.status().ToString()}});
    return config_.retry_ms;
  }
  if (!leader->has_value()) return 0;  // it lapsed between the two calls: campaign again now
  const directory::Leader& current = **leader;
  Observe(current.holder, current.term);
  return std::clamp<int64_t>(current.ttl_ms + kLeaderTakeoverSlackMs, 1, config_.renew_interval_ms);
}

void DirectorLeadership::BecomeLeader(Instant sent, const directory::LeaseGrant& grant) {
  bool fresh;
  {
    std::lock_guard lock(mu_);
    fresh = !leading_ || term_ != grant.epoch;
    leading_ = true;
    term_ = grant.epoch;
    // The directory started the grant's ttl after `sent`, so this is never later than the
    // lease's real end (minus the margin for clock rates).
    deadline_ = sent + Millis(grant.ttl_ms - config_.step_down_margin_ms);
    next_renew_ = sent + Millis(config_.renew_interval_ms);
  }
  if (fresh) Observe(config_.candidate, grant.epoch);
}

void DirectorLeadership::StepDown(std::string_view reason) {
  uint64_t term;
  {
    std::lock_guard lock(mu_);
    if (!leading_) return;
    leading_ = false;
    term = term_;
    term_ = 0;
  }
  logger_.Warn("stepping down", {{"scope", config_.scope},
                                 {"candidate", config_.candidate},
                                 {"epoch", term},
                                 {"reason", reason}});
}

void DirectorLeadership::Resign() {
  uint64_t term;
  {
    std::lock_guard lock(mu_);
    if (!leading_) return;
    term = term_;
  }
  StepDown("resigning");
  const Status resigned = directory_.Resign(config_.scope, config_.candidate, term);
  if (!resigned.ok()) {
    // The lease lapses on its own within the TTL; nothing this director does depends on it.
    logger_.Warn("director resign failed",
                 {{"scope", config_.scope}, {"error", resigned.ToString()}});
  }
}

void DirectorLeadership::Observe(const std::string& leader, uint64_t term) {
  {
    std::lock_guard lock(mu_);
    if (observed_ == leader && observed_term_ == term) return;
    observed_ = leader;
    observed_term_ = term;
  }
  logger_.Info("director leadership changed", {{"scope", config_.scope},
                                               {"leader", leader},
                                               {"epoch", term},
                                               {"self", leader == config_.candidate}});
}

}  // namespace telos::director
