// Argument checks, new-row builders and refusal messages shared by the store backends (private
// to src/store; not part of the public include/ surface).
//
// The SQLite and PostgreSQL backends (and the checkpoint code) must refuse the same bad input
// with the same StatusCode and the same message, and create the same rows, so that the
// conformance suites and callers see one behaviour whatever the backend. Every function here is
// a pure function of its arguments: it touches no connection, owns nothing and may be called
// from any thread. The checks run before a backend takes its lock or talks to its database; the
// message builders are for the refusals a backend reaches after reading its rows.
// Backend-specific SQL, error mapping and connection handling stay in the backend folders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "telos/base/status.h"
#include "telos/store/account_store.h"
#include "telos/store/audit_store.h"
#include "telos/store/character_record.h"
#include "telos/store/records_store.h"

namespace telos::store {

// ------------------------------------------------------------------------------------ helpers

// InvalidArgument "<what> is longer than <bytes_max> bytes" when value is; OK otherwise.
Status CheckBytes(std::string_view what, std::string_view value, size_t bytes_max);

// Re-labels a status of one code with a clearer message, keeping every other status as is.
Status Relabel(Status status, StatusCode code, std::string message);

// `name` in single quotes, as every store message shows a name.
std::string Quoted(std::string_view name);

// --------------------------------------------------------------------------------- characters

// The name and the size-bounded fields of a record that is created or saved, and a
// zone_lease_epoch that is not negative.
Status CheckCharacterContent(const CharacterRecord& record);

// The arguments of CharacterStore::ClaimOwnership.
Status CheckClaimArgs(std::string_view name, int64_t directory_epoch);

// The arguments of CharacterStore::Save: the record's content, then the fences (a leased save
// must name its zone).
Status CheckSaveArgs(const CharacterRecord& record, int64_t expected_state_version,
                     int64_t writer_owner_epoch);

// The arguments of CharacterStore::RaiseZoneFence.
Status CheckRaiseZoneFenceArgs(std::string_view zone, int64_t lease_epoch, std::string_view shard);

// The after_id of CharacterStore::ListZoneWrites; returns the row count to ask the database
// for: min(limit, kZoneWritesListMax).
Result<int64_t> CheckListZoneWritesArgs(int64_t after_id, size_t limit);

// The row CharacterStore::Create writes for `record`: state_version 1, owner_epoch 0, created
// and updated at now_ms; the other fields as given.
CharacterRecord NewCharacterRow(const CharacterRecord& record, int64_t now_ms);

// NotFound: no character row for `name`.
Status NoSuchCharacter(std::string_view name);

// ResourceExhausted: the account already holds limits::kCharactersPerAccountMax characters.
Status TooManyCharacters(int64_t account_id);

// FailedPrecondition: a save by a writer whose owner_epoch is below the row's (a zombie).
Status Fenced(std::string_view name, int64_t row_epoch, int64_t writer_epoch);

// FailedPrecondition ("zone fenced"): the fence of `zone` is at fence_epoch, above the
// zone_lease_epoch the save of `name` carried: a newer tenure of the zone has begun.
Status ZoneFenced(std::string_view name, std::string_view zone, int64_t fence_epoch,
                  int64_t writer_epoch);

// Conflict: the row's state_version is not the one the writer read; it must re-read and rebase.
Status StaleStateVersion(std::string_view name, int64_t row_version, int64_t expected_version);

// FailedPrecondition: the row's owner_epoch cannot be raised any further.
Status OwnerEpochExhausted(std::string_view name);

// ----------------------------------------------------------------------------------- accounts

// An encoded argon2id string of at most limits::kPasswordHashBytesMax bytes.
Status CheckPasswordHash(std::string_view hash);

// The row AccountStore::Create writes, created at now_ms; its id is left 0 for the backend to
// fill in from the database.
AccountRecord NewAccountRow(std::string_view name, std::string_view password_hash, int64_t now_ms);

// InvalidArgument when the lock deadline of AccountStore::LockUntil is negative.
Status CheckLockUntil(int64_t until_ms);
// InvalidArgument unless both sets hold only known roles.
Status CheckRoleUpdate(Roles grant, Roles revoke);
// InvalidArgument for an audit row AuditStore::Append refuses, or a list limit past its bound.
Status CheckAuditRow(const AuditRow& row);
Status CheckAuditListLimit(size_t limit);

// NotFound: no account row with `id`.
Status NoSuchAccount(int64_t id);

// ------------------------------------------------------------------------------------ mail

// The arguments of MailStore::Send: a non-empty bounded sender, bounded subject and body, and a
// valid recipient name.
Status CheckMailArgs(std::string_view from, std::string_view to, std::string_view subject,
                     std::string_view body);

// ResourceExhausted: the recipient's mailbox holds limits::kMailboxMessagesMax letters.
Status MailboxFull(std::string_view recipient);

// NotFound: `recipient` has no letter `id`.
Status NoSuchLetter(std::string_view recipient, int64_t id);

// ------------------------------------------------------------------------------------ records

// The consumer and the event's fields RecordsStore::Apply requires.
Status CheckGameEvent(std::string_view consumer, const GameEvent& event);
// RecordsStore::ReserveSequence's source: non-empty, at most kRecordFieldBytesMax bytes.
Status CheckSequenceSource(std::string_view source);

}  // namespace telos::store
