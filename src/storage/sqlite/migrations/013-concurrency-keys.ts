/**
 * 013: concurrency keys. `tasks.concurrency_key` (null: none) is read with the due columns, so the
 * dispatcher knows each ready task's key; `concurrency_limits` holds the limit per key set at run
 * time by admins (a key without a row is unlimited).
 */
export const up = `
ALTER TABLE tasks ADD COLUMN concurrency_key TEXT;

CREATE TABLE concurrency_limits (
  key         TEXT    PRIMARY KEY,
  max_running INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) WITHOUT ROWID;
`;
