/**
 * 012: checkpoints and progress of long tasks (domain/checkpoint.ts, domain/progress.ts). The last
 * checkpoint (JSON text, at most 64 KiB), the attempt that saved it and when; the last progress
 * report, its attempt and when. All null until an attempt writes them (and on every task stored
 * before this migration). Columns added at the end of the row: no table rewrite, and the claim,
 * which reads `checkpoint`, finds null there for the tasks that never saved one.
 */
export const up = `
ALTER TABLE tasks ADD COLUMN checkpoint TEXT;
ALTER TABLE tasks ADD COLUMN checkpoint_attempt INTEGER;
ALTER TABLE tasks ADD COLUMN checkpoint_at INTEGER;
ALTER TABLE tasks ADD COLUMN progress TEXT;
ALTER TABLE tasks ADD COLUMN progress_attempt INTEGER;
ALTER TABLE tasks ADD COLUMN progress_at INTEGER;
`;
