/**
 * 005: workflows (docs/DESIGN.md §8). A workflow row keeps its status and the number of its tasks not yet
 * terminal (`open_tasks`), maintained in the same transaction as every task transition, so the
 * status is never out of step with the tasks. Workflow tasks are ordinary task rows with a
 * `workflow_id`, their workflow-local id and the count of dependencies that have not succeeded
 * (`unmet_deps`, decremented as each upstream succeeds; at 0 the task leaves BLOCKED). Edges are
 * stored once, upstream → downstream, indexed both ways (release and failure propagation walk
 * downstream; a claim reads the upstream results; the audit checks a BLOCKED task's upstreams).
 * (Number 004 is taken by cron on main.)
 */
export const up = `
CREATE TABLE workflows (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,
  id               TEXT    NOT NULL UNIQUE,
  name             TEXT,
  tenant_id        TEXT    NOT NULL,
  metadata         TEXT    NOT NULL,
  status           TEXT    NOT NULL,
  task_count       INTEGER NOT NULL,
  open_tasks       INTEGER NOT NULL,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  completed_at     INTEGER
);

CREATE INDEX workflows_status_seq ON workflows (status, seq);

CREATE TABLE workflow_edges (
  upstream_id   TEXT NOT NULL,
  downstream_id TEXT NOT NULL,
  PRIMARY KEY (upstream_id, downstream_id)
) WITHOUT ROWID;

CREATE INDEX workflow_edges_downstream ON workflow_edges (downstream_id, upstream_id);

ALTER TABLE tasks ADD COLUMN workflow_id TEXT;
ALTER TABLE tasks ADD COLUMN workflow_task_id TEXT;
ALTER TABLE tasks ADD COLUMN unmet_deps INTEGER NOT NULL DEFAULT 0;

CREATE INDEX tasks_workflow ON tasks (workflow_id, seq) WHERE workflow_id IS NOT NULL;
`;
