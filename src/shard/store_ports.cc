#include "telos/shard/store_ports.h"

#include "telos/world/character_state.h"

namespace telos::shard {
namespace {
constexpr std::chrono::milliseconds kAwaitSavedTimeout{5000};
}  // namespace

StorePersistence::StorePersistence(store::CharacterStore& store, Metrics& metrics, Logger& log,
                                   store::CharacterSaver::Options options)
    : store_(store),
      log_(log),
      saver_(
          store, metrics, log, [this](const store::SaveReport& r) { OnReport(r); }, options) {}

StorePersistence::~StorePersistence() {
  Stop();
}

void StorePersistence::EnableCheckpoints(store::CheckpointStore& checkpoints, const Clock& clock,
                                         int64_t row_flush_interval_ms, Metrics& metrics) {
  clock_ = &clock;
  row_flush_interval_ms_ = row_flush_interval_ms;
  checkpoints_ = std::make_unique<CheckpointWriter>(checkpoints, log_, metrics);
}

void StorePersistence::Start() {
  saver_.Start();
  if (checkpoints_) checkpoints_->Start();
}
void StorePersistence::Stop() {
  saver_.Stop();
  if (checkpoints_) checkpoints_->Stop();
}

void StorePersistence::Register(const std::string& name_key, const std::string& display_name,
                                int64_t account_id, int64_t state_version, int64_t owner_epoch) {
  std::lock_guard lock(mu_);
  fences_[name_key] = Fences{display_name, account_id, state_version, owner_epoch,
                             clock_ != nullptr ? clock_->Now() : Instant{}};
}

void StorePersistence::Unregister(const std::string& name_key) {
  std::lock_guard lock(mu_);
  fences_.erase(name_key);
  ephemeral_.erase(name_key);
}

void StorePersistence::RegisterEphemeral(const std::string& name_key) {
  std::lock_guard lock(mu_);
  fences_.erase(name_key);
  ephemeral_.insert(name_key);
}

void StorePersistence::AwaitSaved(const std::string& name_key) {
  const Status s = saver_.Flush(name_key, kAwaitSavedTimeout);
  if (!s.ok()) {
    log_.Warn("pending save not written", {{"character", name_key}, {"error", s.ToString()}});
    return;
  }
  // The character is about to be claimed afresh: versions written in its last visit no longer
  // matter, and forgetting them keeps the saver's memory bounded by who is online.
  saver_.Forget(name_key);
}

Status StorePersistence::FlushAll(std::chrono::milliseconds timeout) {
  return saver_.FlushAll(timeout);
}

bool StorePersistence::FlushCheckpoints(std::chrono::milliseconds timeout) {
  return checkpoints_ == nullptr || checkpoints_->Flush(timeout.count());
}

void StorePersistence::RequestSave(world::CharacterSnapshot snapshot) {
  {
    std::lock_guard lock(mu_);
    if (ephemeral_.contains(snapshot.name_key)) return;
  }
  auto state = world::DecodeCharacter(snapshot.state_json);
  if (!state.ok()) {
    // A bug in the engine's encoder: keep the last good row rather than store garbage.
    log_.Error("refusing to save an unreadable character state",
               {{"character", snapshot.name_key}, {"error", state.status().ToString()}});
    return;
  }
  // Any save is newer than one still held back for this character (in whichever zone): the
  // held one must never be written after it, or it would roll the row back.
  ForgetHeld(snapshot.name_key);
  WriteGate gate = GateOf(state->room.zone);
  if (gate == WriteGate::kDrop) {
    log_.Info("save dropped: its zone's lease went to a peer while this shard was cut off",
              {{"character", snapshot.name_key}, {"zone", state->room.zone}});
    return;
  }
  if (store::Checkpoint checkpoint;
      gate == WriteGate::kOpen && CheckpointOnly(snapshot, *state, checkpoint)) {
    checkpoints_->Put(std::move(checkpoint));
    return;
  }
  store::CharacterSnapshot out;
  {
    std::lock_guard lock(mu_);
    auto it = fences_.find(snapshot.name_key);
    if (it == fences_.end()) {
      log_.Warn("save for a character not claimed here was dropped",
                {{"character", snapshot.name_key}});
      return;
    }
    out.record.name = it->second.display_name;
    out.record.account_id = it->second.account_id;
    out.expected_state_version = it->second.state_version;
    out.writer_owner_epoch = it->second.owner_epoch;
    out.record.writer_shard = shard_id_;
    if (auto epoch = lease_epochs_.find(state->room.zone); epoch != lease_epochs_.end()) {
      out.record.zone_lease_epoch = static_cast<int64_t>(epoch->second);
    }
    if (clock_ != nullptr) it->second.last_row_request = clock_->Now();
  }
  out.record.zone_id = state->room.zone;
  out.record.room_id = state->room.id;
  out.record.state_json = std::move(snapshot.state_json);
  if (gate == WriteGate::kHold) {
    bool first = false;
    {
      std::lock_guard lock(mu_);
      // Checked again under the lock: ReleaseZone may have run since GateOf.
      auto zone = zone_gates_.find(out.record.zone_id);
      if (zone != zone_gates_.end() && zone->second.gate == WriteGate::kHold) {
        first = zone->second.held.empty();
        zone->second.held[snapshot.name_key] = std::move(out);  // the newest one wins
        gate = WriteGate::kDrop;                                // i.e. taken care of
      }
    }
    if (first) {
      log_.Info("saves held: zone in single-shard mode", {{"zone", state->room.zone}});
    }
    if (gate == WriteGate::kDrop) return;
  }
  Submit(std::move(out));
}

void StorePersistence::Submit(store::CharacterSnapshot out) {
  const std::string name = out.record.name;
  if (Status s = saver_.Submit(std::move(out)); !s.ok()) {
    log_.Error("save not queued", {{"character", name}, {"error", s.ToString()}});
  }
}

void StorePersistence::ForgetHeld(const std::string& name_key) {
  std::lock_guard lock(mu_);
  for (auto& [zone, gate] : zone_gates_) gate.held.erase(name_key);
}

void StorePersistence::SetShard(std::string shard_id) {
  std::lock_guard lock(mu_);
  shard_id_ = std::move(shard_id);
}

void StorePersistence::SetLeaseEpoch(const std::string& zone, uint64_t lease_epoch) {
  std::lock_guard lock(mu_);
  lease_epochs_[zone] = lease_epoch;
}

StorePersistence::WriteGate StorePersistence::GateOf(const std::string& zone) {
  std::lock_guard lock(mu_);
  auto it = zone_gates_.find(zone);
  return it == zone_gates_.end() ? WriteGate::kOpen : it->second.gate;
}

void StorePersistence::HoldZone(const std::string& zone) {
  std::lock_guard lock(mu_);
  zone_gates_[zone].gate = WriteGate::kHold;
}

void StorePersistence::ReleaseZone(const std::string& zone) {
  size_t released = 0;
  {
    std::lock_guard lock(mu_);
    auto it = zone_gates_.find(zone);
    if (it == zone_gates_.end()) return;
    // Re-stamped with the tenure now confirmed: if it is a new one (the lease lapsed while
    // Redis was away and was won again), nobody else wrote the zone meanwhile or the store's
    // fence would have refused the new epoch; a character a peer claimed meanwhile is still
    // refused by its owner_epoch. Submitted under the lock so that no newer save of the same
    // character can reach the saver first and be replaced by this older one.
    const auto epoch = lease_epochs_.find(zone);
    for (auto& [key, out] : it->second.held) {
      if (epoch != lease_epochs_.end())
        out.record.zone_lease_epoch = static_cast<int64_t>(epoch->second);
      Submit(std::move(out));
      ++released;
    }
    zone_gates_.erase(it);
  }
  if (released != 0) {
    log_.Info("writing saves held in single-shard mode",
              {{"zone", zone}, {"characters", static_cast<int64_t>(released)}});
  }
}

void StorePersistence::SubmitHeld() {
  std::lock_guard lock(mu_);
  for (auto& [zone, gate] : zone_gates_) {
    for (auto& [key, out] : gate.held) Submit(std::move(out));
    gate.held.clear();
  }
}

void StorePersistence::DropZone(const std::string& zone) {
  size_t dropped = 0;
  {
    std::lock_guard lock(mu_);
    ZoneGate& gate = zone_gates_[zone];
    dropped = gate.held.size();
    gate.held.clear();
    gate.gate = WriteGate::kDrop;
  }
  if (dropped != 0) {
    log_.Warn("saves held in single-shard mode dropped: the zone's lease went to a peer",
              {{"zone", zone}, {"characters", static_cast<int64_t>(dropped)}});
  }
}

bool StorePersistence::CheckpointOnly(const world::CharacterSnapshot& snapshot,
                                      const world::CharacterState& state,
                                      store::Checkpoint& checkpoint) {
  if (!checkpoints_ || snapshot.reason != world::SaveReason::kPeriodic) return false;
  std::lock_guard lock(mu_);
  auto it = fences_.find(snapshot.name_key);
  if (it == fences_.end()) return false;  // the row path logs and drops it
  if (ElapsedMs(it->second.last_row_request, clock_->Now()) >= row_flush_interval_ms_) {
    return false;
  }
  // Taken at the row's current (pre-CAS) version: on a tie the checkpoint is the fresher one.
  checkpoint.name = it->second.display_name;
  checkpoint.account_id = it->second.account_id;
  checkpoint.state_version = it->second.state_version;
  checkpoint.owner_epoch = it->second.owner_epoch;
  checkpoint.zone_id = state.room.zone;
  checkpoint.room_id = state.room.id;
  checkpoint.state_json = snapshot.state_json;
  return store::ValidateCheckpoint(checkpoint).ok();
}

void StorePersistence::OnReport(const store::SaveReport& report) {
  if (report.status.ok()) {
    std::lock_guard lock(mu_);
    auto it = fences_.find(world::NameKey(report.name));
    if (it != fences_.end() && it->second.owner_epoch == report.writer_owner_epoch &&
        report.new_state_version > it->second.state_version) {
      it->second.state_version = report.new_state_version;
    }
    return;
  }
  if (report.status.code() == StatusCode::kConflict) {
    // Someone wrote the row since our last known version (a save whose report we missed).
    // Rebase: the next periodic save carries the newer state on top of the row's version.
    auto row = store_.Load(report.name);
    std::lock_guard lock(mu_);
    auto it = fences_.find(world::NameKey(report.name));
    if (row.ok() && it != fences_.end() && row->owner_epoch == it->second.owner_epoch) {
      it->second.state_version = row->state_version;
      log_.Warn("save conflict: rebased on the stored version",
                {{"character", report.name}, {"state_version", row->state_version}});
      return;
    }
  }
  if (store::IsFenced(report.status)) {
    log_.Warn("save fenced: a newer owner of the character or tenure of its zone wrote it",
              {{"character", report.name}, {"error", report.status.ToString()}});
    if (!store::IsZoneFenced(report.status) && on_owner_fenced_) {
      // Only when the fenced write came from the claim this shard still plays under: a late
      // report about an earlier visit must not evict the character's current copy.
      bool current = false;
      {
        std::lock_guard lock(mu_);
        auto it = fences_.find(world::NameKey(report.name));
        current = it != fences_.end() && it->second.owner_epoch == report.writer_owner_epoch;
      }
      if (current) on_owner_fenced_(world::NameKey(report.name));
    }
  } else {
    log_.Error("character save failed",
               {{"character", report.name}, {"error", report.status.ToString()}});
  }
}

StoreMail::StoreMail(store::MailStore& mail, BlockingRunner blocking)
    : mail_(mail), blocking_(std::move(blocking)) {}

void StoreMail::Send(std::string from, std::string to, std::string subject, std::string body,
                     std::function<void(Status)> done) {
  blocking_([this, from = std::move(from), to = std::move(to), subject = std::move(subject),
             body = std::move(body), done = std::move(done)] {
    auto id = mail_.Send(from, to, subject, body);
    done(id.ok() ? Status::Ok() : id.status());
  });
}

void StoreMail::List(std::string owner,
                     std::function<void(Result<std::vector<world::MailHeader>>)> done) {
  blocking_([this, owner = std::move(owner), done = std::move(done)] {
    auto list = mail_.List(owner);
    if (!list.ok()) return done(list.status());
    std::vector<world::MailHeader> out;
    for (const auto& h : *list) out.push_back({h.id, h.from, h.subject, h.sent_at_ms, h.read});
    done(std::move(out));
  });
}

StoreRecords::StoreRecords(store::RecordsStore& records, BlockingRunner blocking)
    : records_(records), blocking_(std::move(blocking)) {}

void StoreRecords::Tallies(std::function<void(Result<std::vector<world::RecordLine>>)> done) {
  blocking_([this, done = std::move(done)] {
    auto tallies = records_.Tallies();
    if (!tallies.ok()) return done(tallies.status());
    std::vector<world::RecordLine> out;
    out.reserve(tallies->size());
    for (const store::Tally& t : *tallies) {
      out.push_back(
          {t.kind, t.subject, t.count, t.first_actor, t.first_at_ms, t.last_actor, t.last_at_ms});
    }
    done(std::move(out));
  });
}

void StoreMail::Read(std::string owner, int64_t id,
                     std::function<void(Result<world::MailMessage>)> done) {
  blocking_([this, owner = std::move(owner), id, done = std::move(done)] {
    auto m = mail_.Read(owner, id);
    if (!m.ok()) return done(m.status());
    done(world::MailMessage{{m->id, m->from, m->subject, m->sent_at_ms, m->read}, m->body});
  });
}

AccountPasswords::AccountPasswords(account::AccountDesk& accounts, BlockingRunner blocking)
    : accounts_(accounts), blocking_(std::move(blocking)) {}

void AccountPasswords::Change(std::string name_key, std::string old_password,
                              std::string new_password, std::function<void(Status)> done) {
  blocking_([this, name_key = std::move(name_key), old_password = std::move(old_password),
             new_password = std::move(new_password), done = std::move(done)] {
    done(accounts_.ChangePassword(name_key, old_password, new_password));
  });
}

}  // namespace telos::shard
