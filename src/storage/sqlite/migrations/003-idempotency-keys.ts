/**
 * 003: idempotency keys, unique per tenant while they are retained. `request_hash` is the SHA-256
 * of the canonical submission, so a repeat with a different body can be refused.
 */
export const up = `
CREATE TABLE idempotency_keys (
  tenant_id    TEXT    NOT NULL,
  key          TEXT    NOT NULL,
  task_id      TEXT    NOT NULL,
  request_hash TEXT    NOT NULL,
  expires_at   INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, key)
) WITHOUT ROWID;
`;
