// Zone: the actor shell around ZoneCore — inbox, heartbeat scheduling, lifecycle.
#include "telos/world/zone.h"

#include <atomic>

#include "telos/base/limits.h"
#include "zone_core.h"

namespace telos::world {
namespace {

// No output pulse is scheduled this close before a heartbeat, which flushes everyone anyway.
constexpr int64_t kPulseHeartbeatGapMs = 20;

std::atomic<int64_t> live_zones{0};  // Zone::LiveCount

}  // namespace

int64_t Zone::LiveCount() {
  return live_zones.load(std::memory_order_relaxed);
}

std::shared_ptr<Zone> Zone::Create(std::shared_ptr<const Pack> pack, std::string zone_id,
                                   uint64_t seed, ZoneDeps deps,
                                   std::shared_ptr<Executor> executor) {
  std::shared_ptr<Zone> zone(
      new Zone(std::move(pack), std::move(zone_id), seed, deps, std::move(executor)));
  // Port callbacks may arrive on any thread after the zone is gone: only enqueue when alive.
  zone->core_->SetPoster(
      [weak = std::weak_ptr<Zone>(zone)](std::function<void(ZoneCore&)> work) -> Status {
        if (std::shared_ptr<Zone> self = weak.lock()) return self->Enqueue(std::move(work));
        return Status::Cancelled("zone gone");
      });
  return zone;
}

Zone::Zone(std::shared_ptr<const Pack> pack, std::string zone_id, uint64_t seed, ZoneDeps deps,
           std::shared_ptr<Executor> executor)
    : id_(std::move(zone_id)), executor_(std::move(executor)), deps_(deps) {
  RELEASE_ASSERT(deps.clock && deps.logger && deps.metrics && deps.persistence && deps.mail &&
                     deps.passwords && deps.router,
                 "every zone dependency must be set");
  const ZoneDef* def = pack->FindZone(id_);
  RELEASE_ASSERT(def != nullptr, "zone not in pack: " + id_);
  tick_lag_ms_ = &deps.metrics->Histogram("zone_tick_lag_ms",
                                          "How late the zone heartbeat fired, in milliseconds",
                                          Metrics::LatencyBucketsMs(), {{"zone", id_}});
  core_ = std::make_unique<ZoneCore>(std::move(pack), *def, seed, deps);
  live_zones.fetch_add(1, std::memory_order_relaxed);
}

Zone::~Zone() {
  live_zones.fetch_sub(1, std::memory_order_relaxed);
}

Status Zone::Enqueue(std::function<void(ZoneCore&)> message) {
  bool post = false;
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    if (closed_) return Status::Cancelled("zone " + id_ + " is stopping");
    if (inbox_.size() >= limits::kZoneInboxDepthMax) {
      return Status::ResourceExhausted("zone " + id_ + " inbox is full");
    }
    inbox_.push_back(std::move(message));
    if (!drain_posted_) {
      drain_posted_ = true;
      post = true;
    }
  }
  if (post) executor_->Post([self = shared_from_this()] { self->Drain(); });
  return Status::Ok();
}

void Zone::Drain() {
  std::vector<std::function<void(ZoneCore&)>> batch;
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    batch.swap(inbox_);
    drain_posted_ = false;
  }
  for (auto& message : batch) message(*core_);
  FlushAfterBatch();
}

void Zone::FlushAfterBatch() {
  if (deps_.output_pulse_ms <= 0) {
    core_->Flush();
    return;
  }
  core_->FlushUrgent();
  if (crowded_ || pulse_scheduled_ || !core_->has_deferred_output()) return;
  const Instant pulse_at = deps_.clock->Now() + Millis(deps_.output_pulse_ms);
  // The heartbeat flushes everyone too: a pulse just before it would only make it late.
  if (pulse_at + Millis(kPulseHeartbeatGapMs) >= next_heartbeat_) return;
  pulse_scheduled_ = true;
  executor_->PostAt(pulse_at, [self = shared_from_this()] { self->OutputPulse(); });
}

void Zone::OutputPulse() {
  pulse_scheduled_ = false;
  if (stopped_on_executor_ || crowded_) return;
  FlushEveryone();
}

void Zone::FlushEveryone() {
  core_->Flush();
  crowded_ = core_->last_flush_players() >= deps_.output_pulse_crowd_players;
  if (crowded_) {
    // Counts as the crowd's last period, which the next heartbeat judges.
    crowd_period_players_ = core_->last_flush_players();
    crowd_next_slice_ = limits::kCrowdFlushSlices;
  }
}

void Zone::FlushAtHeartbeat(Instant deadline) {
  if (deps_.output_pulse_ms <= 0) return core_->Flush();
  if (crowded_) {
    // Slices the last period did not reach (the zone fell behind) go now: nobody's output
    // waits past a heartbeat, however late the zone runs.
    while (crowd_next_slice_ < limits::kCrowdFlushSlices) FlushNextCrowdSlice();
    crowded_ = crowd_period_players_ >= deps_.output_pulse_crowd_players;
  }
  if (!crowded_) return FlushEveryone();  // the crowd has thinned: pulses come back
  ++crowd_period_;
  crowd_period_players_ = 0;
  crowd_next_slice_ = 0;
  FlushCrowdSlice(crowd_period_, deadline);
}

void Zone::FlushNextCrowdSlice() {
  crowd_period_players_ += core_->FlushSlice(crowd_next_slice_++, limits::kCrowdFlushSlices);
}

void Zone::FlushCrowdSlice(uint64_t period, Instant deadline) {
  // A slice left over from an earlier period was flushed when the next heartbeat came.
  if (stopped_on_executor_ || period != crowd_period_) return;
  if (crowd_next_slice_ >= limits::kCrowdFlushSlices) return;
  FlushNextCrowdSlice();
  if (crowd_next_slice_ == limits::kCrowdFlushSlices) return;
  const Instant at =
      deadline + Millis(limits::kZoneHeartbeatMs * static_cast<int64_t>(crowd_next_slice_) /
                        static_cast<int64_t>(limits::kCrowdFlushSlices));
  executor_->PostAt(at, [self = shared_from_this(), period, deadline] {
    self->FlushCrowdSlice(period, deadline);
  });
}

size_t Zone::inbox_depth() const {
  std::lock_guard<std::mutex> lock(inbox_mu_);
  return inbox_.size();
}

void Zone::Start(Duration phase) {
  RELEASE_ASSERT(phase >= Duration::zero() && phase < Millis(limits::kZoneHeartbeatMs),
                 "a heartbeat phase is less than one heartbeat");
  executor_->Post([self = shared_from_this(), phase] {
    self->core_->Start();
    self->core_->Flush();
    self->ScheduleHeartbeat(self->deps_.clock->Now() + Millis(limits::kZoneHeartbeatMs) - phase);
  });
}

void Zone::ScheduleHeartbeat(Instant deadline) {
  next_heartbeat_ = deadline;
  executor_->PostAt(deadline, [self = shared_from_this(), deadline] { self->Heartbeat(deadline); });
}

void Zone::Heartbeat(Instant deadline) {
  if (stopped_on_executor_) return;
  Instant now = deps_.clock->Now();
  double lag_ms = std::chrono::duration<double, std::milli>(now - deadline).count();
  tick_lag_ms_->Observe(lag_ms < 0 ? 0 : lag_ms);
  core_->Heartbeat();
  FlushAtHeartbeat(deadline);
  // Keep the schedule anchored to the original deadlines; when more than a few beats behind,
  // skip the missed ones rather than firing them back to back.
  Instant next = deadline + Millis(limits::kZoneHeartbeatMs);
  if (now - next > Millis(4 * limits::kZoneHeartbeatMs))
    next = now + Millis(limits::kZoneHeartbeatMs);
  ScheduleHeartbeat(next);
}

void Zone::Stop(std::function<void(std::vector<PlayerTransfer>)> done) {
  executor_->Post([self = shared_from_this(), done = std::move(done)] {
    // Close the inbox first, then apply what it already accepted: nothing can slip in after.
    {
      std::lock_guard<std::mutex> lock(self->inbox_mu_);
      self->closed_ = true;
    }
    self->Drain();
    self->stopped_on_executor_ = true;
    std::vector<PlayerTransfer> players = self->core_->FreezeAll();
    self->core_->Flush();
    done(std::move(players));
  });
}

Status Zone::Admit(PlayerTransfer transfer) {
  return TryAdmit(transfer);
}

Status Zone::TryAdmit(PlayerTransfer& transfer) {
  auto shared = std::make_shared<PlayerTransfer>(std::move(transfer));
  Status status = Enqueue([shared](ZoneCore& core) { core.Admit(std::move(*shared)); });
  if (!status.ok()) transfer = std::move(*shared);  // refused: the caller keeps the player
  return status;
}

Status Zone::Command(std::string name_key, std::string line, int hops) {
  if (line.size() > limits::kInputLineBytesMax) line.resize(limits::kInputLineBytesMax);
  return Enqueue([name_key = std::move(name_key), line = std::move(line), hops](ZoneCore& core) {
    core.Command(name_key, line, hops);
  });
}

Status Zone::Freeze(std::string name_key, std::function<void(Result<PlayerTransfer>)> done) {
  return Enqueue([name_key = std::move(name_key), done = std::move(done)](ZoneCore& core) {
    Result<PlayerTransfer> transfer = core.Freeze(name_key, SaveReason::kFreeze);
    core.Flush();
    done(std::move(transfer));
  });
}

Status Zone::DeliverTell(std::string from, std::string to_key, std::string text) {
  return Enqueue([from = std::move(from), to_key = std::move(to_key), text = std::move(text)](
                     ZoneCore& core) { core.DeliverTell(from, to_key, text); });
}

Status Zone::DeliverChannel(std::string channel, std::string from, std::string text) {
  return Enqueue([channel = std::move(channel), from = std::move(from), text = std::move(text)](
                     ZoneCore& core) { core.DeliverChannel(channel, from, text); });
}

Status Zone::DeliverNotice(std::string to_key, std::string text) {
  return Enqueue([to_key = std::move(to_key), text = std::move(text)](ZoneCore& core) {
    core.Notice(to_key, text);
  });
}

Status Zone::ApplyStaff(StaffOrder order, std::function<void(StaffOutcome)> done) {
  return Enqueue([order = std::move(order), done = std::move(done)](ZoneCore& core) {
    done(core.ApplyStaff(order));
  });
}

Status Zone::Teleport(std::string name_key, Ref room) {
  return Enqueue([name_key = std::move(name_key), room = std::move(room)](ZoneCore& core) {
    core.Teleport(name_key, room);
  });
}

Status Zone::SetRoles(std::string name_key, Roles roles) {
  return Enqueue(
      [name_key = std::move(name_key), roles](ZoneCore& core) { core.SetRoles(name_key, roles); });
}

Status Zone::DeliverAnnouncement(std::string text) {
  return Enqueue([text = std::move(text)](ZoneCore& core) { core.Announce(text); });
}

Status Zone::DeliverBroadcast(std::string text, OutputEvent event) {
  return Enqueue([text = std::move(text), event = std::move(event)](ZoneCore& core) {
    core.Broadcast(text, event);
  });
}

Status Zone::DeliverParty(std::string to_key, PartyMessage message) {
  return Enqueue([to_key = std::move(to_key), message = std::move(message)](ZoneCore& core) {
    core.DeliverParty(to_key, message);
  });
}

Status Zone::Inspect(std::function<void(const ZoneCore&)> probe) {
  return Enqueue([probe = std::move(probe)](ZoneCore& core) { probe(core); });
}

}  // namespace telos::world
