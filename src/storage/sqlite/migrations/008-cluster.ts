/**
 * 008: cluster-mode ownership (docs/CLUSTER.md). `members` (live service processes) and `partition_leases`
 * (one row per partition ever leased: owner, fencing epoch, expiry; never deleted, so epochs only
 * grow), and `tasks.owner_epoch`, the fencing epoch of the last owner that fenced, fired or claimed
 * the task. The embedded profile never leases: every task keeps epoch 0 and the unfenced
 * statements (which do not read the column) stay the hot path. Adding a column with a constant
 * default rewrites no rows.
 */
export const up = `
CREATE TABLE members (
  member_id    TEXT PRIMARY KEY,
  address      TEXT,
  heartbeat_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL
);

CREATE TABLE partition_leases (
  partition  INTEGER PRIMARY KEY,
  owner      TEXT NOT NULL,
  epoch      INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);

ALTER TABLE tasks ADD COLUMN owner_epoch INTEGER NOT NULL DEFAULT 0;
`;
