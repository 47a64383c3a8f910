// The world engine's ports (telos/world/ports.h) implemented on the stores, for a process that
// hosts zones: character saves through the write-behind CharacterSaver with both fences, mail
// through the MailStore, password changes through the AccountService.
//
// StorePersistence learns each character's fences (account, state_version, owner_epoch) when the
// character is claimed (Register) and stamps them on every save the world requests; the
// saver's reports move the expected version forward. It owns the saver: Start() before the
// world runs, Stop() after every zone has stopped (it writes what is still queued).
//
// Thread safety: every method may be called from any thread. RequestSave and the mail and
// password calls never block (the latter run on the BlockingRunner); AwaitSaved blocks and
// belongs on the blocking pool.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "telos/account/account_desk.h"
#include "telos/base/blocking.h"
#include "telos/base/clock.h"
#include "telos/base/log.h"
#include "telos/base/metrics.h"
#include "telos/shard/checkpoint_writer.h"
#include "telos/store/character_saver.h"
#include "telos/store/checkpoint_store.h"
#include "telos/store/mail_store.h"
#include "telos/store/records_store.h"
#include "telos/world/character_state.h"
#include "telos/world/ports.h"

namespace telos::shard {

class StorePersistence final : public world::CharacterPersistence {
 public:
  StorePersistence(store::CharacterStore& store, Metrics& metrics, Logger& log,
                   store::CharacterSaver::Options options = {});
  ~StorePersistence() override;

  // The durability ladder (spec 001): from now on a periodic save request becomes a checkpoint
  // in `checkpoints` and the row is written at most every `row_flush_interval_ms` per
  // character; quit, freeze (leaving the shard), level and death still write the row at once.
  // REQUIRES: before Start(); `checkpoints` and `clock` outlive this object.
  void EnableCheckpoints(store::CheckpointStore& checkpoints, const Clock& clock,
                         int64_t row_flush_interval_ms, Metrics& metrics);

  void Start();
  void Stop();

  // world::CharacterPersistence
  void RequestSave(world::CharacterSnapshot snapshot) override;

  // The character was claimed (WorldShard admits it): saves from now on carry these fences.
  void Register(const std::string& name_key, const std::string& display_name, int64_t account_id,
                int64_t state_version, int64_t owner_epoch);
  // The character left the world; its last save has been requested.
  void Unregister(const std::string& name_key);
  // A character playing while PostgreSQL is unreachable: nothing of it is ever written (its
  // saves are dropped quietly) until Unregister.
  void RegisterEphemeral(const std::string& name_key);

  // Called (on the saver's thread) with the name key of a character whose save the store
  // refused because a newer owner claimed it: the copy here is stale. REQUIRES: before Start().
  void OnOwnerFenced(std::function<void(const std::string& name_key)> callback) {
    on_owner_fenced_ = std::move(callback);
  }

  // ---- the zone lease fence (invariant 1): every save carries (zone, shard, lease epoch)
  // This shard's id, written with every save. REQUIRES: before the first save.
  void SetShard(std::string shard_id);
  // Saves of characters standing in `zone` carry `lease_epoch` from now on (the tenure the
  // lease keeper just won); a zone never set carries 0 (unleased, like the lobby).
  void SetLeaseEpoch(const std::string& zone, uint64_t lease_epoch);

  // ---- single-shard mode (ZoneLeaseKeeper suspends a zone it cannot confirm)
  // Keeps back every save of a character standing in `zone` (the newest per character) and
  // writes no checkpoint for it, until ReleaseZone or DropZone.
  void HoldZone(const std::string& zone);
  // The zone's lease is confirmed again (or it starts afresh): writes what was kept back and
  // lets its saves through again.
  void ReleaseZone(const std::string& zone);
  // The zone's lease went to a peer while this shard was cut off: what was kept back is dropped,
  // and so is every save for the zone until ReleaseZone (the peer's copy is the live one).
  void DropZone(const std::string& zone);
  // Shutdown: hands every held save to the store at the epoch it was made in; the store's zone
  // fence decides (written if no newer tenure of the zone has started).
  void SubmitHeld();
  // Blocks until any save still queued for the character is written (or a deadline passes),
  // so that claiming it again reads its latest state. Call it on the blocking pool.
  void AwaitSaved(const std::string& name_key);

  // Blocks until everything queued is written (shutdown). DeadlineExceeded after `timeout`.
  Status FlushAll(std::chrono::milliseconds timeout);
  // Blocks until every queued checkpoint is written (true; also without checkpoints) or the
  // timeout passes (false).
  bool FlushCheckpoints(std::chrono::milliseconds timeout);

 private:
  struct Fences {
    std::string display_name;
    int64_t account_id = 0;
    int64_t state_version = 0;
    int64_t owner_epoch = 0;
    Instant last_row_request{};  // when a row write was last asked for (or the claim)
  };
  enum class WriteGate { kOpen, kHold, kDrop };
  struct ZoneGate {
    WriteGate gate = WriteGate::kOpen;
    std::map<std::string, store::CharacterSnapshot> held;  // by name key
  };
  WriteGate GateOf(const std::string& zone);
  void ForgetHeld(const std::string& name_key);
  void Submit(store::CharacterSnapshot out);
  void OnReport(const store::SaveReport& report);
  // True when this periodic request should only checkpoint; fills `checkpoint`.
  bool CheckpointOnly(const world::CharacterSnapshot& snapshot, const world::CharacterState& state,
                      store::Checkpoint& checkpoint);

  store::CharacterStore& store_;
  Logger& log_;
  std::mutex mu_;
  std::map<std::string, Fences> fences_;          // guarded by mu_; by name key
  std::set<std::string> ephemeral_;               // guarded by mu_; by name key
  std::map<std::string, ZoneGate> zone_gates_;    // guarded by mu_; by zone, only when not open
  std::map<std::string, uint64_t> lease_epochs_;  // guarded by mu_; by zone
  std::string shard_id_;                          // set before the first save
  std::function<void(const std::string&)> on_owner_fenced_;  // fixed before Start
  const Clock* clock_ = nullptr;                             // set with the checkpoints
  int64_t row_flush_interval_ms_ = 0;
  std::unique_ptr<CheckpointWriter> checkpoints_;
  store::CharacterSaver saver_;  // last: its worker calls OnReport
};

class StoreMail final : public world::MailPort {
 public:
  StoreMail(store::MailStore& mail, BlockingRunner blocking);
  void Send(std::string from, std::string to, std::string subject, std::string body,
            std::function<void(Status)> done) override;
  void List(std::string owner,
            std::function<void(Result<std::vector<world::MailHeader>>)> done) override;
  void Read(std::string owner, int64_t id,
            std::function<void(Result<world::MailMessage>)> done) override;

 private:
  store::MailStore& mail_;
  BlockingRunner blocking_;
};

// The fleet-wide records for the `records` command, read on the blocking pool.
class StoreRecords final : public world::RecordsPort {
 public:
  StoreRecords(store::RecordsStore& records, BlockingRunner blocking);
  void Tallies(std::function<void(Result<std::vector<world::RecordLine>>)> done) override;

 private:
  store::RecordsStore& records_;
  BlockingRunner blocking_;
};

class AccountPasswords final : public world::PasswordPort {
 public:
  AccountPasswords(account::AccountDesk& accounts, BlockingRunner blocking);
  void Change(std::string name_key, std::string old_password, std::string new_password,
              std::function<void(Status)> done) override;

 private:
  account::AccountDesk& accounts_;
  BlockingRunner blocking_;
};

}  // namespace telos::shard
