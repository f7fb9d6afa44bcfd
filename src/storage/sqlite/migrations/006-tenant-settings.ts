/**
 * 006: dispatch settings changed at run time by admins (docs/TENANTS.md): tenant weights and start limits,
 * and start limits per task type. Config files give the defaults; these rows override them.
 */
export const up = `
CREATE TABLE tenant_settings (
  tenant_id       TEXT    PRIMARY KEY,
  weight          REAL,
  rate_per_second REAL,
  burst           REAL,
  updated_at      INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE task_type_limits (
  task_type       TEXT    PRIMARY KEY,
  rate_per_second REAL    NOT NULL,
  burst           REAL    NOT NULL,
  updated_at      INTEGER NOT NULL
) WITHOUT ROWID;

-- No (tenant_id, state) index: it would be updated by every claim and completion; the waiting
-- counts (only while a backpressure cap is set) read the state index instead.
`;
