-- The staff audit trail (src/store/include/telos/store/audit_store.h): one row per staff
-- action, appended only. The same shape as schema/sql/postgres/0006.
CREATE TABLE staff_audit (
  id INTEGER PRIMARY KEY,
  at_unix_ms INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  detail TEXT NOT NULL,
  world TEXT NOT NULL
) STRICT;
CREATE INDEX staff_audit_actor ON staff_audit (lower(actor), id);
CREATE INDEX staff_audit_target ON staff_audit (lower(target), id);
