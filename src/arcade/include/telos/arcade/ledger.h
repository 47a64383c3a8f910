// Ledger: the arcade's double-entry chip ledger (issue 27 item 4). The port the arcade uses;
// backends are telos::store::SqliteLedger (embedded, `telos serve`), telos::store::PostgresLedger
// (fleet) and MemoryLedger (tests, the reference model). One conformance suite runs on all three
// (src/store/ledger_conformance.h).
//
// Accounts are named by strings: "house", "player:<name>", "escrow:<game>:<round>". An account
// exists once a posting names it and starts at zero. Every posting is a balanced transaction:
// its legs (account, signed amount) sum to zero, so the sum of all balances is always zero.
// Only the house may go below zero (it is the counterparty of every chip sold to a player, so
// its balance is minus everything players and escrows hold); a posting that would take any
// other account below zero is refused whole.
//
// Idempotency: every posting carries a key chosen by the client. A posting whose key was
// applied before is not applied again: the answer is the original result (its posting id, with
// replayed = true). The same key with a different posting is refused (AlreadyExists) and changes
// nothing. A refused posting is not recorded, so a retry of it is judged afresh.
//
// Escrow closure: a posting may close one escrow account (the settlement or the refund of a
// round). It must leave that escrow at exactly zero, and afterwards every new posting that
// names the closed escrow is refused (FailedPrecondition). A round is therefore settled or
// refunded once, by whichever closer commits first: the fence that keeps a takeover refund, a
// periodic sweep and a late settlement from paying the same stake twice.
//
// Batches: PostBatch applies its postings in order, each all-or-nothing, and all of them in ONE
// durable commit (group commit). The outer Status is the commit's: Unavailable (nothing was
// applied) or UnknownResult (all or nothing was applied; a retry with the same keys is safe and
// answers with the original results). Inner results are per posting.
//
// Thread safety: implementations are safe to call from any thread. Calls BLOCK on I/O: call
// them from the wager batcher's thread or the blocking pool, never from an executor.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/status.h"

namespace telos::arcade {

inline constexpr std::string_view kHouseAccount = "house";
inline constexpr std::string_view kPlayerPrefix = "player:";
inline constexpr std::string_view kEscrowPrefix = "escrow:";

struct Leg {
  std::string account;
  int64_t amount = 0;  // chips; negative debits, positive credits; never zero

  bool operator==(const Leg&) const = default;
};

struct Posting {
  std::string key;            // the client's idempotency key
  std::vector<Leg> legs;      // summing to zero; each account at most once
  std::string closes_escrow;  // empty, or an escrow account among the legs it closes
  bool operator==(const Posting&) const = default;
};

struct PostingResult {
  int64_t posting_id = 0;  // > 0, unique within one ledger
  bool replayed = false;   // true: the key was applied before and this is that result

  bool operator==(const PostingResult&) const = default;
};

struct AccountBalance {
  std::string account;
  int64_t balance = 0;

  bool operator==(const AccountBalance&) const = default;
};

class Ledger {
 public:
  virtual ~Ledger() = default;

  // See the header comment. The outer result holds one entry per posting, in order. Per
  // posting: InvalidArgument (malformed: see ValidatePosting), FailedPrecondition (an account
  // would go below zero, or an escrow it names is closed), AlreadyExists (the key was used for
  // a different posting). REQUIRES: postings.size() <= kArcadeBatchPostingsMax (else the outer
  // status is InvalidArgument).
  virtual Result<std::vector<Result<PostingResult>>> PostBatch(
      std::span<const Posting> postings) = 0;

  // The balance of one account (0 for an account never named).
  virtual Result<int64_t> Balance(std::string_view account) = 0;

  // Every account whose balance is not zero, ordered by name (invariant checks, operators).
  virtual Result<std::vector<AccountBalance>> Balances() = 0;

  // What flowed between `escrow` and each other account, netted per account over every posting
  // naming the escrow, ordered by account: a stake of 10 from player:a reads {player:a, -10}.
  // Reversing these flows refunds the escrow exactly (see refund.h).
  virtual Result<std::vector<Leg>> EscrowFlows(std::string_view escrow) = 0;

  // Whether `escrow` has been closed.
  virtual Result<bool> EscrowClosed(std::string_view escrow) = 0;

  // Escrow accounts whose names start with `prefix` ("escrow:crash:") with a non-zero balance
  // and no closure, ordered by name, at most `limit`: what a reconciliation sweep looks at.
  // REQUIRES: prefix starts with "escrow:" (else InvalidArgument).
  virtual Result<std::vector<std::string>> OpenEscrows(std::string_view prefix, size_t limit) = 0;

  // Claims the next position of a fairness chain durably and atomically: 0 on the first call
  // for `chain`, then 1, 2, ... Never hands out one position twice, across processes and
  // restarts, so a driver that takes a game over never replays a round hash.
  virtual Result<int64_t> ClaimChainPosition(std::string_view chain) = 0;

  // One posting: PostBatch of one.
  Result<PostingResult> Post(const Posting& posting);
};

// Only the house may go below zero.
bool MayGoNegative(std::string_view account);
bool IsEscrow(std::string_view account);

// A posting is well formed when: the key is 1..kArcadeIdempotencyKeyBytesMax bytes of printable
// ASCII; it has 2..kArcadeLegsPerPostingMax legs; every account is a valid name (the house,
// player:X or escrow:X with X 1.. bytes of printable ASCII without spaces, the whole name at
// most kArcadeAccountNameBytesMax) named at most once; every amount is non-zero and within
// +-kArcadeChipsMax; the amounts sum to zero; closes_escrow is empty or an escrow among the legs.
Status ValidatePosting(const Posting& posting);
Status ValidateAccountName(std::string_view account);

// A stable digest of everything a posting says (legs in order, the closure), so a replayed key
// can be told from a reused one. 16 lower-case hex digits (FNV-1a, 64 bits).
std::string PostingFingerprint(const Posting& posting);

}  // namespace telos::arcade
