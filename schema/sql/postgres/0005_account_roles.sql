-- Staff roles of an account (telos/base/roles.h): a bit set, builder = 1, admin = 2; 0 is a
-- plain player. Changed only by `telos admin grant` / `revoke`; every existing account starts
-- as a player. The same shape as schema/sql/sqlite/0007.
ALTER TABLE accounts ADD COLUMN roles BIGINT NOT NULL DEFAULT 0 CHECK (roles >= 0);
