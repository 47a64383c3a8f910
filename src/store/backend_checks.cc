#include "backend_checks.h"

#include <algorithm>
#include <string>
#include <utility>

#include "telos/base/limits.h"
#include "telos/store/character_store.h"

namespace telos::store {
namespace {

constexpr std::string_view kArgon2idPrefix = "$argon2id$";

}  // namespace

Status CheckBytes(std::string_view what, std::string_view value, size_t bytes_max) {
  if (value.size() <= bytes_max) return Status::Ok();
  return Status::InvalidArgument(std::string(what) + " is longer than " +
                                 std::to_string(bytes_max) + " bytes");
}

Status Relabel(Status status, StatusCode code, std::string message) {
  if (status.code() == code) return Status(code, std::move(message));
  return status;
}

std::string Quoted(std::string_view name) {
  return "'" + std::string(name) + "'";
}

// --------------------------------------------------------------------------------- characters

Status CheckCharacterContent(const CharacterRecord& record) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(record.name));
  TELOS_RETURN_IF_ERROR(CheckBytes("zone_id", record.zone_id, limits::kZoneIdBytesMax));
  TELOS_RETURN_IF_ERROR(CheckBytes("room_id", record.room_id, limits::kRoomIdBytesMax));
  TELOS_RETURN_IF_ERROR(CheckBytes("writer_shard", record.writer_shard, kShardIdBytesMax));
  if (record.zone_lease_epoch < 0) return Status::InvalidArgument("zone_lease_epoch is negative");
  return CheckBytes("state_json", record.state_json, limits::kCharacterStateBytesMax);
}

Status CheckClaimArgs(std::string_view name, int64_t directory_epoch) {
  TELOS_RETURN_IF_ERROR(ValidateCharacterName(name));
  if (directory_epoch < 0) return Status::InvalidArgument("directory_epoch is negative");
  return Status::Ok();
}

Status CheckSaveArgs(const CharacterRecord& record, int64_t expected_state_version,
                     int64_t writer_owner_epoch) {
  TELOS_RETURN_IF_ERROR(CheckCharacterContent(record));
  if (expected_state_version < 1) {
    return Status::InvalidArgument("expected_state_version must be at least 1");
  }
  if (writer_owner_epoch < 0) return Status::InvalidArgument("writer_owner_epoch is negative");
  if (record.zone_lease_epoch > 0 && record.zone_id.empty()) {
    return Status::InvalidArgument("a save with a zone_lease_epoch must name its zone_id");
  }
  return Status::Ok();
}

Status CheckRaiseZoneFenceArgs(std::string_view zone, int64_t lease_epoch, std::string_view shard) {
  if (zone.empty()) return Status::InvalidArgument("the zone of a zone fence is empty");
  TELOS_RETURN_IF_ERROR(CheckBytes("the zone", zone, limits::kZoneIdBytesMax));
  TELOS_RETURN_IF_ERROR(CheckBytes("the shard", shard, kShardIdBytesMax));
  if (lease_epoch < 1) return Status::InvalidArgument("a zone lease_epoch must be at least 1");
  return Status::Ok();
}

Result<int64_t> CheckListZoneWritesArgs(int64_t after_id, size_t limit) {
  if (after_id < 0) return Status::InvalidArgument("after_id is negative");
  return static_cast<int64_t>(std::min(limit, kZoneWritesListMax));
}

CharacterRecord NewCharacterRow(const CharacterRecord& record, int64_t now_ms) {
  CharacterRecord stored = record;
  stored.state_version = 1;
  stored.owner_epoch = 0;
  stored.created_at_ms = now_ms;
  stored.updated_at_ms = stored.created_at_ms;
  return stored;
}

Status NoSuchCharacter(std::string_view name) {
  return Status::NotFound("no character named " + Quoted(name));
}

Status TooManyCharacters(int64_t account_id) {
  return Status::ResourceExhausted("account " + std::to_string(account_id) + " already has " +
                                   std::to_string(limits::kCharactersPerAccountMax) +
                                   " characters");
}

Status Fenced(std::string_view name, int64_t row_epoch, int64_t writer_epoch) {
  return Status::FailedPrecondition("fenced: " + Quoted(name) + " is owned at owner_epoch " +
                                    std::to_string(row_epoch) + ", above this writer's " +
                                    std::to_string(writer_epoch));
}

Status ZoneFenced(std::string_view name, std::string_view zone, int64_t fence_epoch,
                  int64_t writer_epoch) {
  return Status::FailedPrecondition(
      "zone fenced: zone " + Quoted(zone) + " is fenced at lease_epoch " +
      std::to_string(fence_epoch) + ", above the lease_epoch " + std::to_string(writer_epoch) +
      " this save of " + Quoted(name) + " carries; a newer tenure of the zone has begun");
}

Status StaleStateVersion(std::string_view name, int64_t row_version, int64_t expected_version) {
  return Status::Conflict("state_version of " + Quoted(name) + " is " +
                          std::to_string(row_version) + ", not the expected " +
                          std::to_string(expected_version) + "; re-read and rebase");
}

Status OwnerEpochExhausted(std::string_view name) {
  return Status::FailedPrecondition("owner_epoch of " + Quoted(name) + " is exhausted");
}

// ----------------------------------------------------------------------------------- accounts

Status CheckPasswordHash(std::string_view hash) {
  if (!hash.starts_with(kArgon2idPrefix)) {
    return Status::InvalidArgument("a password hash must be an encoded argon2id string");
  }
  return CheckBytes("password hash", hash, limits::kPasswordHashBytesMax);
}

AccountRecord NewAccountRow(std::string_view name, std::string_view password_hash, int64_t now_ms) {
  AccountRecord stored;
  stored.name = std::string(name);
  stored.password_hash = std::string(password_hash);
  stored.created_at_ms = now_ms;
  return stored;
}

Status CheckRoleUpdate(Roles grant, Roles revoke) {
  if (!RolesKnown(grant) || !RolesKnown(revoke)) {
    return Status::InvalidArgument("unknown role bits in a role update");
  }
  return Status::Ok();
}

Status CheckAuditRow(const AuditRow& row) {
  if (row.actor.empty() || row.action.empty()) {
    return Status::InvalidArgument("an audit row names its actor and action");
  }
  for (const std::string* field : {&row.actor, &row.action, &row.target, &row.detail, &row.world}) {
    if (field->size() > limits::kAuditDetailBytesMax) {
      return Status::InvalidArgument("an audit field is longer than the limit");
    }
  }
  return Status::Ok();
}

Status CheckAuditListLimit(size_t limit) {
  if (limit == 0 || limit > limits::kAuditListMax) {
    return Status::InvalidArgument("an audit listing takes 1 to " +
                                   std::to_string(limits::kAuditListMax) + " rows");
  }
  return Status::Ok();
}

Status CheckLockUntil(int64_t until_ms) {
  if (until_ms < 0) return Status::InvalidArgument("until_ms is negative");
  return Status::Ok();
}

Status NoSuchAccount(int64_t id) {
  return Status::NotFound("no account with id " + std::to_string(id));
}

// ------------------------------------------------------------------------------------ mail

Status CheckMailArgs(std::string_view from, std::string_view to, std::string_view subject,
                     std::string_view body) {
  if (from.empty()) return Status::InvalidArgument("the sender is empty");
  TELOS_RETURN_IF_ERROR(CheckBytes("the sender", from, limits::kMailSenderBytesMax));
  TELOS_RETURN_IF_ERROR(CheckBytes("the subject", subject, limits::kMailSubjectBytesMax));
  TELOS_RETURN_IF_ERROR(CheckBytes("the body", body, limits::kMailBodyBytesMax));
  return ValidateCharacterName(to);
}

Status MailboxFull(std::string_view recipient) {
  return Status::ResourceExhausted("the mailbox of " + Quoted(recipient) + " is full");
}

Status NoSuchLetter(std::string_view recipient, int64_t id) {
  return Status::NotFound(Quoted(recipient) + " has no letter " + std::to_string(id));
}

Status CheckGameEvent(std::string_view consumer, const GameEvent& event) {
  const std::pair<const char*, std::string_view> required[] = {
      {"the consumer", consumer},
      {"the event's source", event.source},
      {"the event's kind", event.kind},
      {"the event's subject", event.subject}};
  for (const auto& [what, value] : required) {
    if (value.empty()) return Status::InvalidArgument(std::string(what) + " is empty");
    TELOS_RETURN_IF_ERROR(CheckBytes(what, value, limits::kRecordFieldBytesMax));
  }
  TELOS_RETURN_IF_ERROR(CheckBytes("the event's actor", event.actor, limits::kRecordFieldBytesMax));
  if (event.sequence < 1) return Status::InvalidArgument("the event's sequence is below 1");
  return Status::Ok();
}

Status CheckSequenceSource(std::string_view source) {
  if (source.empty()) return Status::InvalidArgument("the event's source is empty");
  return CheckBytes("the event's source", source, limits::kRecordFieldBytesMax);
}

}  // namespace telos::store
