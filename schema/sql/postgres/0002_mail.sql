-- In-game mail, addressed to a character and deleted with it.
--
-- An identity column draws from a sequence, which never hands out a number twice (not even after
-- a rollback), so a stale "read 7" cannot reach a newer letter.

CREATE TABLE mail (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  recipient_key TEXT NOT NULL REFERENCES characters (name_key) ON DELETE CASCADE,
  sender TEXT NOT NULL,
  subject TEXT NOT NULL,
  body TEXT NOT NULL,
  sent_at_ms BIGINT NOT NULL,
  is_read BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE INDEX mail_by_recipient ON mail (recipient_key, id);
