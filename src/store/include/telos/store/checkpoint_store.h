// CheckpointStore: the frequent, cheap snapshot of a character that sits between two saves of
// its durable row (spec 001, "the durability ladder"; DESIGN.md section 3 and invariant 8).
//
// The world checkpoints a playing character about every 10 s and saves the row about every
// 60 s. A checkpoint is taken at the row's current (pre-CAS) state_version, so several
// checkpoints between two saves carry the same (owner_epoch, state_version) and ever newer
// content. On load, ChooseFreshest below decides between the row and the checkpoint.
//
// One interface, two backends, one conformance suite (checkpoint_conformance.h):
//   - embedded: SQLite, a `checkpoints` table in the SqliteStore file (SqliteStore::checkpoints());
//   - fleet: Redis, one hash per character (redis_checkpoint_store.h), optionally with a TTL.
//
// The write rule (the only one the store enforces): Put stores the checkpoint unless the stored
// one is strictly fresher by (owner_epoch, state_version), compared lexicographically. An equal
// pair is accepted and REPLACES the stored content: that is both an idempotent retry and the
// normal case of a newer checkpoint between two row saves. A stale writer (a zombie owner, or a
// slow write overtaken by a newer one) is refused with FailedPrecondition ("stale") and changes
// nothing.
//
// Deleting a character must delete its checkpoint too, otherwise a later character of the same
// name could load an old checkpoint. The SQLite backend does it by itself (a trigger on the
// characters table); with Redis the caller deletes the checkpoint (a TTL bounds the leak).
//
// Ownership: the store owns what it stores; checkpoints are returned by value.
//
// Thread safety: implementations are safe to call from any thread. Calls BLOCK on disk or
// network I/O, so they run on the dedicated blocking pool, never on a zone executor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "telos/base/status.h"
#include "telos/store/character_record.h"

namespace telos::store {

struct Checkpoint {
  std::string name;           // display spelling; the key is NameKey(name)
  int64_t account_id = 0;     // the owning account
  int64_t state_version = 0;  // the row's state_version the snapshot was taken at (>= 1)
  int64_t owner_epoch = 0;    // the writer's ownership epoch (>= 0)
  std::string zone_id;
  std::string room_id;
  std::string state_json;     // opaque to the store, as in CharacterRecord
  int64_t written_at_ms = 0;  // Unix milliseconds, set by the store on Put from its Clock

  bool operator==(const Checkpoint&) const = default;
};

// A snapshot of `record` as a checkpoint (written_at_ms is left 0; Put sets it).
Checkpoint CheckpointOf(const CharacterRecord& record);

// InvalidArgument unless `checkpoint` is storable: a valid character name, state_version >= 1,
// owner_epoch >= 0, account_id >= 0 and every field within limits.h.
Status ValidateCheckpoint(const Checkpoint& checkpoint);

class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;

  // Stores `checkpoint` under NameKey(checkpoint.name) with written_at_ms = now, unless the
  // stored checkpoint's (owner_epoch, state_version) is above this one's: then
  // FailedPrecondition whose message contains "stale", and the stored one is untouched.
  // Unavailable when the backend cannot be reached (nothing was written); UnknownResult when
  // the request was sent but no answer came (it may have been applied; a retry is safe, since
  // an equal pair is accepted).
  // REQUIRES: ValidateCheckpoint(checkpoint) is OK (else InvalidArgument).
  virtual Status Put(const Checkpoint& checkpoint) = 0;

  // The checkpoint of `name` in any letter case. NotFound when there is none (never written,
  // deleted, or expired).
  virtual Result<Checkpoint> Get(std::string_view name) = 0;

  // Removes the checkpoint of `name` in any letter case. OK whether or not there was one, so a
  // retry after UnknownResult is harmless.
  virtual Status Delete(std::string_view name) = 0;
};

// --------------------------------------------------------------- invariant 8: freshest wins

enum class LoadSource { kRow, kCheckpoint };

struct FreshestChoice {
  LoadSource source = LoadSource::kRow;
  // What to play with: the row itself, or the row with the checkpoint's fences, position and
  // state (name, account_id, created_at_ms, writer_shard and zone_lease_epoch stay the row's;
  // updated_at_ms becomes the checkpoint's written_at_ms).
  CharacterRecord record;
  // The row's own state_version: what the next CharacterStore::Save must expect, whichever
  // side won.
  int64_t row_state_version = 0;

  bool operator==(const FreshestChoice&) const = default;
};

// True when `checkpoint` beats `row` under invariant 8: (owner_epoch, state_version) compared
// lexicographically, a tie going to the checkpoint (a checkpoint is taken at the pre-CAS
// version, so on a tie it carries the newer content).
bool CheckpointIsFresher(const CharacterRecord& row, const Checkpoint& checkpoint);

// Load picks the freshest of {row, checkpoint} (DESIGN.md invariant 8). Pure: no I/O, no clock.
// With no checkpoint the row wins.
// REQUIRES: when present, NameKey(checkpoint->name) == NameKey(row.name).
FreshestChoice ChooseFreshest(const CharacterRecord& row,
                              const std::optional<Checkpoint>& checkpoint);

}  // namespace telos::store
