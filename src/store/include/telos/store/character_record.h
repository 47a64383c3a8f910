// CharacterRecord: the durable row of one character, as the store sees it.
//
// The store is agnostic about game rules: stats, inventory, equipment, affects and the wallet
// travel as one opaque JSON document (`state_json`) that the world module writes and reads. The
// store only owns the columns it must reason about: the name key, the account, the two
// per-character fences (state_version and owner_epoch), where the character stands, who wrote it
// last (writer_shard and zone_lease_epoch, the third fence, see character_store.h), and
// timestamps.
//
// The two fences are different things (spec 001, "the durability ladder"):
//   - state_version is optimistic concurrency: it says "somebody wrote since you read". Every
//     successful save bumps it by one; a loser re-reads and rebases.
//   - owner_epoch is the ownership fence: minted by every claim (login, handoff) and never
//     lowered. A writer whose epoch is below the row's is a zombie and must not write at all.
//
// Names: a character is keyed by its lower-cased name, so "Aldric" and "aldric" are the same
// character; the display spelling chosen at creation is kept as `name`.
//
// Thread safety: a plain value; copy and move freely across threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "telos/base/status.h"

namespace telos::store {

struct CharacterRecord {
  std::string name;           // display spelling, e.g. "Aldric"; the key is NameKey(name)
  int64_t account_id = 0;     // the owning account (AccountStore)
  int64_t state_version = 0;  // bumped by every successful save; a new row starts at 1
  int64_t owner_epoch = 0;    // raised by every ClaimOwnership; 0 means never claimed
  std::string zone_id;        // where the character stands; empty means "the start room"
  std::string room_id;
  std::string state_json;     // opaque to the store; the world serializes the game state here
  int64_t created_at_ms = 0;  // Unix milliseconds, set by the store
  int64_t updated_at_ms = 0;  // Unix milliseconds of the last create or save, set by the store
  // Who last wrote the row: the world shard, and the lease epoch it held on `zone_id` when it
  // wrote. Save stores the caller's values; a zone_lease_epoch above 0 is checked against the
  // zone's fence (CharacterStore::Save). 0 means an unleased zone (the lobby, say) or a write
  // from outside any zone, and skips that fence. Create stores what it is given.
  std::string writer_shard;
  int64_t zone_lease_epoch = 0;

  bool operator==(const CharacterRecord&) const = default;
};

// The unique key of a name: ASCII lower case. Only meaningful for names that pass
// ValidateCharacterName.
std::string NameKey(std::string_view name);

// What the store accepts as a character name: 1..limits::kCharacterNameBytesMax bytes of ASCII
// letters, digits, '-' or '_'. The game may be stricter; the store needs this much so that the
// lower-case key is well defined. InvalidArgument says what is wrong.
Status ValidateCharacterName(std::string_view name);

// The same rule for account names, up to limits::kAccountNameBytesMax bytes.
Status ValidateAccountName(std::string_view name);

}  // namespace telos::store
