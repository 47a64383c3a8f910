// CharacterStore: durable characters with a three-fence save.
//
// One interface, two backends: SQLite for a single machine (sqlite_store.h) and PostgreSQL for
// the fleet (postgres_store.h). Both pass the conformance suite in
// src/store/store_conformance_test.cc.
//
// The save is conditional on three independent fences (spec 001, the durability ladder; DESIGN
// invariant 1, the zone lease epoch):
//   1. the row's owner_epoch is not above `writer_owner_epoch` — otherwise kFailedPrecondition
//      with a message containing "fenced": a newer owner claimed the character, and this writer
//      must stop writing it. Rebasing cannot get past this fence, by design.
//   2. when record.zone_lease_epoch > 0, the fence of record.zone_id is not above it —
//      otherwise kFailedPrecondition with a message containing "zone fenced": a newer tenure of
//      the zone has begun (another shard won the lease, or this one lost and regained it), and
//      nothing the older tenure does may land any more. The owner fence cannot say this: it
//      only rises when somebody claims that one character, while a shard paused past its lease
//      (SIGSTOP, a frozen VM) wakes up still holding valid owner epochs for characters
//      the new tenure has not claimed yet, with their saves queued. The zone fence is per zone
//      and is raised by the new tenure (RaiseZoneFence) before its zone runs, so from then on
//      every save of an older tenure is refused, whichever character it carries; two shards
//      never durably write one zone in overlapping tenures. A save at a higher epoch than the
//      fence raises it.
//   3. the row still has `expected_state_version` — otherwise kConflict: somebody else wrote
//      since the caller read; re-read and rebase, then save again.
// When several fail, the first in that order is reported: a zombie must never be told to
// rebase, and the owner fence keeps the verdict it always had. IsFenced is true for both fences.
//
// Ownership: the store owns the rows; records are returned by value.
//
// Thread safety: implementations are safe to call from any thread. Calls BLOCK on disk or
// network I/O, so they belong on the dedicated blocking pool (or the CharacterSaver's worker),
// never on a zone executor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/limits.h"
#include "telos/base/status.h"
#include "telos/store/character_record.h"

namespace telos::store {

// The longest shard id the store records (writer_shard, the shard of a zone fence).
inline constexpr size_t kShardIdBytesMax = limits::kStoreShardIdBytesMax;
// The most entries one ListZoneWrites call returns.
inline constexpr size_t kZoneWritesListMax = limits::kZoneWritesListMax;

// One successful save of a leased zone, as the write history records it (ListZoneWrites).
struct ZoneWrite {
  int64_t id = 0;             // ascending in write order (see ListZoneWrites)
  std::string zone;           // record.zone_id of the save
  int64_t lease_epoch = 0;    // record.zone_lease_epoch, >= 1
  std::string shard;          // record.writer_shard
  std::string name_key;       // NameKey of the character saved
  int64_t state_version = 0;  // the row's state_version after the save
  int64_t written_at_ms = 0;  // Unix milliseconds, the row's updated_at_ms

  bool operator==(const ZoneWrite&) const = default;
};

class CharacterStore {
 public:
  virtual ~CharacterStore() = default;

  // Inserts a new character. The store sets state_version = 1, owner_epoch = 0 and both
  // timestamps; the same fields of `record` are ignored. Returns the row as stored.
  // AlreadyExists when the name is taken in any letter case; NotFound when the account does not
  // exist; ResourceExhausted when the account already has limits::kCharactersPerAccountMax.
  // REQUIRES: ValidateCharacterName(record.name) is OK (else InvalidArgument), field sizes
  //           within limits.h (else InvalidArgument).
  virtual Result<CharacterRecord> Create(const CharacterRecord& record) = 0;

  // The row for `name` in any letter case. NotFound when there is none.
  virtual Result<CharacterRecord> Load(std::string_view name) = 0;

  // The account's characters, oldest first (at most limits::kCharactersPerAccountMax).
  virtual Result<std::vector<CharacterRecord>> ListByAccount(int64_t account_id) = 0;

  // Deletes the character (and its mail). NotFound when there is none.
  virtual Status Delete(std::string_view name) = 0;

  // Makes the caller the character's only legitimate writer: atomically stores
  // owner_epoch = max(directory_epoch, row.owner_epoch) + 1 and returns the row carrying it.
  // The floor is the maximum so an epoch only ever rises even when the (evictable) directory
  // forgot it; the +1 makes the new epoch strictly above every earlier writer's, fencing them.
  // Save with the returned record's owner_epoch. NotFound when there is no such character.
  // REQUIRES: directory_epoch >= 0 (else InvalidArgument).
  virtual Result<CharacterRecord> ClaimOwnership(std::string_view name,
                                                 int64_t directory_epoch) = 0;

  // The three-fence save (see the top of this file). Writes record.zone_id, room_id,
  // state_json, writer_shard and zone_lease_epoch, sets updated_at_ms and state_version =
  // expected_state_version + 1, and returns that new state_version. The row is picked by
  // record.name; record.account_id, state_version, owner_epoch and the timestamps are ignored
  // (the owner and version fences come from the arguments). When record.zone_lease_epoch > 0
  // the zone fence of record.zone_id is judged and, when below, raised to it (created when the
  // zone has none) in the same transaction as the write, so no raise can slip in between.
  // kConflict on a lost version race, kFailedPrecondition ("fenced") for a stale owner,
  // kFailedPrecondition ("zone fenced", naming the zone and both epochs) for a stale zone
  // tenure, NotFound when the character was deleted. A failed save leaves the row and the zone
  // fence untouched.
  // REQUIRES: expected_state_version >= 1, writer_owner_epoch >= 0, record.zone_lease_epoch >= 0
  //           and, when above 0, a non-empty record.zone_id; record.writer_shard at most
  //           kShardIdBytesMax bytes; other sizes within limits.h (else InvalidArgument).
  virtual Result<int64_t> Save(const CharacterRecord& record, int64_t expected_state_version,
                               int64_t writer_owner_epoch) = 0;

  // Begins a tenure of `zone` in storage: atomically stores the zone's fence as
  // max(stored, lease_epoch), recording `shard` and the time whenever it rises (and creating the
  // fence when the zone has none), and returns the fence now stored. A new tenure calls this
  // with the lease epoch it was granted before its zone runs: once it returns, every save of
  // `zone` with 0 < zone_lease_epoch < lease_epoch is refused. A save running at the same time
  // lands entirely before the raise or is refused. A result above `lease_epoch` means a newer
  // tenure already began: the caller's is stale and must not run the zone.
  // REQUIRES: zone is 1..limits::kZoneIdBytesMax bytes, lease_epoch >= 1, shard at most
  //           kShardIdBytesMax bytes (else InvalidArgument).
  virtual Result<int64_t> RaiseZoneFence(std::string_view zone, int64_t lease_epoch,
                                         std::string_view shard) = 0;

  // The write history, for test checkers. A store opened with zone-write recording on
  // (PostgresStoreOptions::record_zone_writes, SqliteStoreOptions::record_zone_writes) appends
  // one ZoneWrite per successful save with zone_lease_epoch > 0, in the save's transaction;
  // with recording off (the default) nothing is appended, and a fresh store lists nothing.
  // Returns up to min(limit, kZoneWritesListMax) entries with id > after_id, oldest first; page
  // by passing the last id seen. Within one zone a later tenure's write always has a higher id
  // than an earlier tenure's (the zone fence orders them). Concurrent saves of one tenure may
  // commit out of id order, so a checker reads the history once the writers have stopped.
  // REQUIRES: after_id >= 0 (else InvalidArgument).
  virtual Result<std::vector<ZoneWrite>> ListZoneWrites(int64_t after_id, size_t limit) = 0;
};

// True when `status` is a fence refusing a stale writer, the owner fence or the zone fence (as
// opposed to a lost version race, which is StatusCode::kConflict).
inline bool IsFenced(const Status& status) {
  return status.code() == StatusCode::kFailedPrecondition;
}

// True when `status` is the zone fence refusing a save of a stale zone tenure: the whole zone
// must stop writing, not just this character.
inline bool IsZoneFenced(const Status& status) {
  return IsFenced(status) && status.message().find("zone fenced") != std::string::npos;
}

}  // namespace telos::store
