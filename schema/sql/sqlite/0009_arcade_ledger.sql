-- The arcade's double-entry chip ledger (src/arcade/include/telos/arcade/ledger.h,
-- src/store/include/telos/store/sqlite_ledger.h; the same shape as schema/sql/postgres/0007).

-- Every account a posting named, with its balance. Only the house may go below zero.
CREATE TABLE arcade_accounts (
  account TEXT PRIMARY KEY,
  balance INTEGER NOT NULL,
  CHECK (balance >= 0 OR account = 'house')
) STRICT, WITHOUT ROWID;

-- One row per applied posting, found by the client's idempotency key; the fingerprint tells a
-- replay (same posting) from a reused key (a different one).
CREATE TABLE arcade_postings (
  posting_id INTEGER PRIMARY KEY,
  idem_key TEXT NOT NULL UNIQUE,
  fingerprint TEXT NOT NULL,
  posted_at_ms INTEGER NOT NULL
) STRICT;

-- The legs of each posting; they sum to zero per posting.
CREATE TABLE arcade_legs (
  posting_id INTEGER NOT NULL REFERENCES arcade_postings (posting_id),
  account TEXT NOT NULL,
  amount INTEGER NOT NULL CHECK (amount <> 0),
  PRIMARY KEY (posting_id, account)
) STRICT, WITHOUT ROWID;
CREATE INDEX arcade_legs_by_account ON arcade_legs (account, posting_id);

-- The fence of a round: an escrow is closed once, by its settlement or its refund.
CREATE TABLE arcade_escrow_closures (
  escrow TEXT PRIMARY KEY,
  posting_id INTEGER NOT NULL REFERENCES arcade_postings (posting_id)
) STRICT, WITHOUT ROWID;

-- The next unclaimed position of each provably fair hash chain.
CREATE TABLE arcade_chain_positions (
  chain TEXT PRIMARY KEY,
  next_position INTEGER NOT NULL CHECK (next_position >= 0)
) STRICT, WITHOUT ROWID;
