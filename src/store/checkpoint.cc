#include "telos/store/checkpoint_store.h"

#include <string>
#include <tuple>

#include "backend_checks.h"
#include "telos/base/assert.h"
#include "telos/base/limits.h"

namespace telos::store {
Checkpoint CheckpointOf(const CharacterRecord& record) {
  return Checkpoint{.name = record.name,
                    .account_id = record.account_id,
                    .state_version = record.state_version,
                    .owner_epoch = record.owner_epoch,
                    .zone_id = record.zone_id,
                    .room_id = record.room_id,
                    .state_json = record.state_json,
                    .written_at_ms = 0};
}

Status ValidateCheckpoint(const Checkpoint& checkpoint) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(checkpoint.name));
  if (checkpoint.state_version < 1) {
    return Status::InvalidArgument("a checkpoint's state_version must be at least 1");
  }
  if (checkpoint.owner_epoch < 0) {
    return Status::InvalidArgument("a checkpoint's owner_epoch is negative");
  }
  if (checkpoint.account_id < 0) {
    return Status::InvalidArgument("a checkpoint's account_id is negative");
  }
  TELOS_RETURN_IF_ERROR(CheckBytes("zone_id", checkpoint.zone_id, limits::kZoneIdBytesMax));
  TELOS_RETURN_IF_ERROR(CheckBytes("room_id", checkpoint.room_id, limits::kRoomIdBytesMax));
  return CheckBytes("state_json", checkpoint.state_json, limits::kCharacterStateBytesMax);
}

bool CheckpointIsFresher(const CharacterRecord& row, const Checkpoint& checkpoint) {
  // >=, not >: the tie goes to the checkpoint.
  return std::tie(checkpoint.owner_epoch, checkpoint.state_version) >=
         std::tie(row.owner_epoch, row.state_version);
}

FreshestChoice ChooseFreshest(const CharacterRecord& row,
                              const std::optional<Checkpoint>& checkpoint) {
  FreshestChoice choice{
      .source = LoadSource::kRow, .record = row, .row_state_version = row.state_version};
  if (!checkpoint.has_value()) return choice;
  if (NameKey(checkpoint->name) != NameKey(row.name)) {
    // A caller bug; in a release build the row, which is at least the right character, wins.
    ASSERT(false, "a checkpoint of another character: " + checkpoint->name + " vs " + row.name);
    return choice;
  }
  if (!CheckpointIsFresher(row, *checkpoint)) return choice;
  choice.source = LoadSource::kCheckpoint;
  choice.record.state_version = checkpoint->state_version;
  choice.record.owner_epoch = checkpoint->owner_epoch;
  choice.record.zone_id = checkpoint->zone_id;
  choice.record.room_id = checkpoint->room_id;
  choice.record.state_json = checkpoint->state_json;
  choice.record.updated_at_ms = checkpoint->written_at_ms;
  return choice;
}

}  // namespace telos::store
