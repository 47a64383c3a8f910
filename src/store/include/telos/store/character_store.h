// CharacterStore: durable characters with a two-fence save.
//
// One interface, two backends: SQLite for a single machine (sqlite_store.h) and PostgreSQL for
// the fleet (postgres_store.h). Both pass the conformance suite in
// src/store/store_conformance_test.cc.
//
// The save is conditional on two independent fences (spec 001, the durability ladder):
//   1. the row still has `expected_state_version` — otherwise kConflict: somebody else wrote
//      since the caller read; re-read and rebase, then save again;
//   2. the row's owner_epoch is not above `writer_owner_epoch` — otherwise kFailedPrecondition
//      with a message containing "fenced": a newer owner claimed the character, and this writer
//      must stop writing it. Rebasing cannot get past this fence, by design.
// When both fail, the fence wins: a zombie owner must never be told to rebase.
//
// Ownership: the store owns the rows; records are returned by value.
//
// Thread safety: implementations are safe to call from any thread. Calls BLOCK on disk or
// network I/O, so they belong on the dedicated blocking pool (or the CharacterSaver's worker),
// never on a zone executor.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "telos/base/status.h"
#include "telos/store/character_record.h"

namespace telos::store {

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

  // The two-fence save (see the top of this file). Writes record.zone_id, room_id and
  // state_json, sets updated_at_ms and state_version = expected_state_version + 1, and returns
  // that new state_version. The row is picked by record.name; record.account_id,
  // state_version, owner_epoch and the timestamps are ignored (the fences come from the
  // arguments). kConflict on a lost version race, kFailedPrecondition ("fenced") for a stale
  // owner, NotFound when the character was deleted. A failed save leaves the row untouched.
  // REQUIRES: expected_state_version >= 1, writer_owner_epoch >= 0, sizes within limits.h
  //           (else InvalidArgument).
  virtual Result<int64_t> Save(const CharacterRecord& record, int64_t expected_state_version,
                               int64_t writer_owner_epoch) = 0;
};

// True when `status` is the ownership fence refusing a stale writer (as opposed to a lost
// version race, which is StatusCode::kConflict).
inline bool IsFenced(const Status& status) {
  return status.code() == StatusCode::kFailedPrecondition;
}

}  // namespace telos::store
