-- The staff audit trail (src/store/include/telos/store/audit_store.h): one row per staff
-- action, appended only. The same shape as schema/sql/sqlite/0008.
CREATE TABLE staff_audit (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at_unix_ms BIGINT NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  detail TEXT NOT NULL,
  world TEXT NOT NULL
);
CREATE INDEX staff_audit_actor ON staff_audit (lower(actor), id);
CREATE INDEX staff_audit_target ON staff_audit (lower(target), id);
