-- The arcade's double-entry chip ledger (src/arcade/include/telos/arcade/ledger.h,
-- src/store/include/telos/store/postgres_ledger.h; the same shape as schema/sql/sqlite/0009).

-- Every account a posting named, with its balance. Only the house may go below zero.
CREATE TABLE arcade_accounts (
  account TEXT COLLATE "C" PRIMARY KEY,
  balance BIGINT NOT NULL,
  CHECK (balance >= 0 OR account = 'house')
);

-- One row per applied posting, found by the client's idempotency key; the fingerprint tells a
-- replay (same posting) from a reused key (a different one).
CREATE TABLE arcade_postings (
  posting_id BIGSERIAL PRIMARY KEY,
  idem_key TEXT NOT NULL UNIQUE,
  fingerprint TEXT NOT NULL,
  posted_at_ms BIGINT NOT NULL
);

-- The legs of each posting; they sum to zero per posting.
CREATE TABLE arcade_legs (
  posting_id BIGINT NOT NULL REFERENCES arcade_postings (posting_id),
  account TEXT COLLATE "C" NOT NULL,
  amount BIGINT NOT NULL CHECK (amount <> 0),
  PRIMARY KEY (posting_id, account)
);
CREATE INDEX arcade_legs_by_account ON arcade_legs (account, posting_id);

-- The fence of a round: an escrow is closed once, by its settlement or its refund.
CREATE TABLE arcade_escrow_closures (
  escrow TEXT COLLATE "C" PRIMARY KEY,
  posting_id BIGINT NOT NULL REFERENCES arcade_postings (posting_id)
);

-- The next unclaimed position of each provably fair hash chain.
CREATE TABLE arcade_chain_positions (
  chain TEXT PRIMARY KEY,
  next_position BIGINT NOT NULL CHECK (next_position >= 0)
);
