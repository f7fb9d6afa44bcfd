/**
 * 004: cron definitions, their fire records, and the link from a task to the cron that fired it.
 * `next_fire_time` is what firing compares-and-sets; `version` changes with every edit.
 */
export const up = `
CREATE TABLE cron_tasks (
  id              TEXT    PRIMARY KEY,
  partition       INTEGER NOT NULL,
  name            TEXT    NOT NULL,
  cron_expression TEXT    NOT NULL,
  timezone        TEXT    NOT NULL,
  template        TEXT    NOT NULL,
  tenant_id       TEXT    NOT NULL,
  overlap_policy  TEXT    NOT NULL,
  catch_up        TEXT    NOT NULL,
  max_catch_up    INTEGER NOT NULL,
  enabled         INTEGER NOT NULL,
  next_fire_time  INTEGER,
  last_fire_time  INTEGER,
  version         INTEGER NOT NULL,
  seq             INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) WITHOUT ROWID;

-- "Enabled crons due before t", in fire order.
CREATE INDEX cron_tasks_due ON cron_tasks (next_fire_time) WHERE enabled = 1 AND next_fire_time IS NOT NULL;
-- Listing, newest first.
CREATE UNIQUE INDEX cron_tasks_seq ON cron_tasks (seq);

CREATE TABLE cron_fires (
  cron_id     TEXT    NOT NULL,
  fire_time   INTEGER NOT NULL,
  outcome     TEXT    NOT NULL,
  reason      TEXT,
  task_id     TEXT,
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (cron_id, fire_time)
) WITHOUT ROWID;
-- Retention of fire records (oldest first across crons).
CREATE INDEX cron_fires_time ON cron_fires (fire_time);

ALTER TABLE tasks ADD COLUMN cron_id TEXT;
-- The live instances of a cron (overlap policies) and crons with queued instances.
CREATE INDEX tasks_cron_live ON tasks (cron_id, state, due_at)
  WHERE cron_id IS NOT NULL AND state NOT IN ('SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED');
`;
