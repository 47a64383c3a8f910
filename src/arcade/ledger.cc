#include "telos/arcade/ledger.h"

#include <cstdio>
#include <unordered_set>

#include "telos/base/limits.h"

namespace telos::arcade {
namespace {

bool PrintableAscii(std::string_view text, bool allow_space) {
  for (char c : text) {
    if (c < '!' || c > '~') {
      if (!(allow_space && c == ' ')) return false;
    }
  }
  return true;
}

}  // namespace

Result<PostingResult> Ledger::Post(const Posting& posting) {
  auto batch = PostBatch(std::span<const Posting>(&posting, 1));
  if (!batch.ok()) return batch.status();
  return std::move((*batch)[0]);
}

bool MayGoNegative(std::string_view account) {
  return account == kHouseAccount;
}

bool IsEscrow(std::string_view account) {
  return account.starts_with(kEscrowPrefix);
}

Status ValidateAccountName(std::string_view account) {
  if (account == kHouseAccount) return Status::Ok();
  if (account.size() > limits::kArcadeAccountNameBytesMax) {
    return Status::InvalidArgument("an account name is longer than " +
                                   std::to_string(limits::kArcadeAccountNameBytesMax) + " bytes");
  }
  std::string_view rest;
  if (account.starts_with(kPlayerPrefix)) {
    rest = account.substr(kPlayerPrefix.size());
  } else if (account.starts_with(kEscrowPrefix)) {
    rest = account.substr(kEscrowPrefix.size());
  } else {
    return Status::InvalidArgument("the account name '" + std::string(account) +
                                   "' is not house, player:NAME or escrow:NAME");
  }
  if (rest.empty() || !PrintableAscii(rest, /*allow_space=*/false)) {
    return Status::InvalidArgument("the account name '" + std::string(account) +
                                   "' needs a name of printable ASCII without spaces");
  }
  return Status::Ok();
}

Status ValidatePosting(const Posting& posting) {
  if (posting.key.empty() || posting.key.size() > limits::kArcadeIdempotencyKeyBytesMax ||
      !PrintableAscii(posting.key, /*allow_space=*/false)) {
    return Status::InvalidArgument("an idempotency key is 1.." +
                                   std::to_string(limits::kArcadeIdempotencyKeyBytesMax) +
                                   " bytes of printable ASCII without spaces");
  }
  if (posting.legs.size() < 2 || posting.legs.size() > limits::kArcadeLegsPerPostingMax) {
    return Status::InvalidArgument("posting " + posting.key + " has " +
                                   std::to_string(posting.legs.size()) + " legs, not 2.." +
                                   std::to_string(limits::kArcadeLegsPerPostingMax));
  }
  std::unordered_set<std::string_view> seen;
  int64_t sum = 0;  // cannot overflow: at most 1026 legs of at most 1e12 each
  bool closes_named = posting.closes_escrow.empty();
  for (const Leg& leg : posting.legs) {
    TELOS_RETURN_IF_ERROR(ValidateAccountName(leg.account));
    if (!seen.insert(leg.account).second) {
      return Status::InvalidArgument("posting " + posting.key + " names " + leg.account + " twice");
    }
    if (leg.amount == 0 || leg.amount > limits::kArcadeChipsMax ||
        leg.amount < -limits::kArcadeChipsMax) {
      return Status::InvalidArgument("posting " + posting.key + " moves " +
                                     std::to_string(leg.amount) + " chips on " + leg.account +
                                     ": an amount is non-zero and at most " +
                                     std::to_string(limits::kArcadeChipsMax));
    }
    sum += leg.amount;
    if (leg.account == posting.closes_escrow) closes_named = true;
  }
  if (sum != 0) {
    return Status::InvalidArgument("posting " + posting.key + " is not balanced (its legs sum to " +
                                   std::to_string(sum) + ")");
  }
  if (!posting.closes_escrow.empty() && !IsEscrow(posting.closes_escrow)) {
    return Status::InvalidArgument("posting " + posting.key + " closes " + posting.closes_escrow +
                                   ", which is not an escrow");
  }
  if (!closes_named) {
    return Status::InvalidArgument("posting " + posting.key + " closes " + posting.closes_escrow +
                                   " without a leg on it");
  }
  return Status::Ok();
}

std::string PostingFingerprint(const Posting& posting) {
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&hash](std::string_view bytes) {
    for (unsigned char c : bytes) {
      hash ^= c;
      hash *= 1099511628211ull;
    }
  };
  for (const Leg& leg : posting.legs) {
    mix(leg.account);
    mix("=");
    mix(std::to_string(leg.amount));
    mix(";");  // no account or number contains ';', so the encoding is unambiguous
  }
  mix("|");
  mix(posting.closes_escrow);
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace telos::arcade
