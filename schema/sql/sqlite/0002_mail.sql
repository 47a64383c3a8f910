-- In-game mail, addressed to a character and deleted with it.
--
-- AUTOINCREMENT so that ids are never reused: a stale "read 7" must not reach a newer letter.

CREATE TABLE mail (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  recipient_key TEXT NOT NULL REFERENCES characters (name_key) ON DELETE CASCADE,
  sender TEXT NOT NULL,
  subject TEXT NOT NULL,
  body TEXT NOT NULL,
  sent_at_ms INTEGER NOT NULL,
  is_read INTEGER NOT NULL DEFAULT 0 CHECK (is_read IN (0, 1))
) STRICT;

CREATE INDEX mail_by_recipient ON mail (recipient_key, id);
