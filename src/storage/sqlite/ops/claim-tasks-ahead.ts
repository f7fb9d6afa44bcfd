/**
 * claimTasksAhead — inputs: ids, workerId, now, until, leaseMs, optional seq hints.
 * Transition `claim` taken ahead of the due time (embedded mode only, `claimAheadMs`): a PENDING
 * task, or a SCHEDULED or RETRYING one due by `until` (due_at <= until, where until >= now), becomes
 * RUNNING with attempts + 1 and worker_id, `started_at` left NULL (nothing has started: the
 * dispatcher holds the attempt until its due time and the completion writes the instant it was
 * sent to its worker), lease_expires_at = max(due_at, now) + leaseMs, cancel flag cleared.
 * Output: ClaimedTask for each id whose compare-and-set won, its `startedAt` the planned start
 * (max(due_at, now)), to be replaced by the dispatcher when it sends the attempt; others skipped
 * (cancelled, claimed, moved past `until`).
 * Guarantee: as claimTasks: one attempt number is handed out once; the read and the write of a
 * row are inside the writer's one transaction. No fencing: cluster mode never claims ahead.
 */
import type Database from 'better-sqlite3';
import { ClaimedTask } from '../../../domain/task';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState } from '../../sql/state-sql';
import { CLAIM_COLUMNS, CLAIMABLE, ClaimRow, prepareClaimedFromRow } from './claim-tasks';

/** The transition `claim`, with no start yet. */
const CLAIM_AHEAD_SET = `state = ${sqlState(TRANSITIONS.claim.to)}, attempts = attempts + 1, worker_id = ?, started_at = NULL, lease_expires_at = ?, cancel_requested = 0, updated_at = ?`;

export function prepareClaimTasksAhead(
  db: Database.Database,
): (ids: string[], workerId: string, now: number, until: number, leaseMs: number, seqs?: readonly number[]) => ClaimedTask[] {
  const find = db.prepare(`SELECT ${CLAIM_COLUMNS} FROM tasks WHERE id = ? AND ${CLAIMABLE}`).raw(true);
  const findBySeq = db.prepare(`SELECT ${CLAIM_COLUMNS} FROM tasks WHERE seq = ? AND id = ? AND ${CLAIMABLE}`).raw(true);
  const claim = db.prepare(`UPDATE tasks SET ${CLAIM_AHEAD_SET} WHERE seq = ?`);
  const claimedFromRow = prepareClaimedFromRow(db);
  return (ids, workerId, now, until, leaseMs, seqs) => {
    const claimed: ClaimedTask[] = [];
    const horizon = Math.max(now, until);
    for (let i = 0; i < ids.length; i++) {
      const seq = seqs?.[i];
      const r = ((seq !== undefined ? findBySeq.get(seq, ids[i], horizon) : undefined) ?? find.get(ids[i], horizon)) as
        ClaimRow | undefined;
      if (!r) continue;
      const start = Math.max(r[7], now);
      claim.run(workerId, start + leaseMs, now, r[0]);
      claimed.push(claimedFromRow(r, start));
    }
    return claimed;
  };
}
