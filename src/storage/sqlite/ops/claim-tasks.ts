/**
 * claimTasks — inputs: ids, workerId, now, leaseMs, optional fencing epochs and seq hints.
 * Transition `claim`: PENDING → RUNNING with attempts + 1, worker_id, started_at = now,
 * lease_expires_at = now + leaseMs, cancel flag cleared.
 * A SCHEDULED or RETRYING task already due (due_at <= now) is claimed the same way: transitions
 * `due` and `claim` in one write: the usual path of a due scheduled task or retry, whose due mark
 * is written only if it still waits at the dispatcher after `dueMarkDelayMs`.
 * Output: ClaimedTask for each id whose compare-and-set won (others are skipped: cancelled,
 * already claimed, not yet due). A workflow task also gets its upstream tasks' results, keyed by
 * their workflow-local ids, and its submission's `traceparent`; a task with a checkpoint saved by
 * an earlier attempt gets its value (`lastCheckpoint`).
 * Guarantee: one attempt number is handed out once. The compare-and-set is a read of the row under
 * the claim's condition and a write of that row, both inside the writer's one transaction
 * (group-commit.ts), which nothing else writes during.
 * With `epochs` (cluster mode, a fencing token per id): the condition also requires
 * owner_epoch <= epochs[i] and the write sets owner_epoch; a negative token never claims. Without
 * it owner_epoch is not read (the embedded hot path is unchanged).
 * With `seqs` (each id's seq from its due entry): the row is read by its rowid and must still have
 * that id; a hint that finds no claimable row is retried by id, so a hint changes the cost (one
 * more read when it finds nothing), never the result. Each ClaimedTask carries its row's `seq`.
 * By rowid a claim skips the search of the id index (figures: docs/design-notes/storage-measurements.md).
 */
import type Database from 'better-sqlite3';
import { ClaimedTask, RetrySettings } from '../../../domain/task';
import { parseJson, RETRY_COLUMNS, retryFromRow } from '../../sql/row-mapping';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

/** The columns a claim reads, in the order {@link claimedFromRow} reads them (after `seq`). */
export const CLAIM_COLUMNS = `seq, id, attempts, task_type, payload, timeout_seconds, idempotency_key, due_at, partition, tenant_id,
  workflow_id, traceparent, checkpoint, ${RETRY_COLUMNS}`;

/** Where the retry columns start in a {@link ClaimRow}. */
const RETRY_AT = 13;

/** A claimable row: `seq` first, then the columns the worker's view is built from. */
export type ClaimRow = [
  number,
  string,
  number,
  string,
  string | null,
  number,
  string | null,
  number,
  number,
  string,
  string | null,
  string | null,
  string | null,
  ...unknown[],
];

/** The transition `claim` itself, on the row found (state and, when fenced, owner_epoch checked by the read). */
const CLAIM_SET = `state = ${sqlState(TRANSITIONS.claim.to)}, attempts = attempts + 1, worker_id = ?, started_at = ?, lease_expires_at = ?, cancel_requested = 0, updated_at = ?`;
export const CLAIMABLE = `(${sqlStates(TRANSITIONS.claim.from)} OR (${sqlStates(TRANSITIONS.dueClaim.from)} AND due_at <= ?))`;

export function prepareClaimTasks(
  db: Database.Database,
): (ids: string[], workerId: string, now: number, leaseMs: number, epochs?: readonly number[], seqs?: readonly number[]) => ClaimedTask[] {
  // A read of the claimable row, then an UPDATE by its rowid, instead of one UPDATE … RETURNING
  // (RETURNING has a fixed cost per execution). Both run inside the writer's one transaction
  // (group-commit.ts), so nothing can change the row between them. Rows come back as arrays
  // (`raw`), cheaper than row objects and spreads.
  const find = db.prepare(`SELECT ${CLAIM_COLUMNS} FROM tasks WHERE id = ? AND ${CLAIMABLE}`).raw(true);
  const findFenced = db.prepare(`SELECT ${CLAIM_COLUMNS} FROM tasks WHERE id = ? AND ${CLAIMABLE} AND owner_epoch <= ?`).raw(true);
  const findBySeq = db.prepare(`SELECT ${CLAIM_COLUMNS} FROM tasks WHERE seq = ? AND id = ? AND ${CLAIMABLE}`).raw(true);
  const findFencedBySeq = db
    .prepare(`SELECT ${CLAIM_COLUMNS} FROM tasks WHERE seq = ? AND id = ? AND ${CLAIMABLE} AND owner_epoch <= ?`)
    .raw(true);
  const claim = db.prepare(`UPDATE tasks SET ${CLAIM_SET} WHERE seq = ?`);
  const claimFenced = db.prepare(`UPDATE tasks SET ${CLAIM_SET}, owner_epoch = ? WHERE seq = ?`);
  const claimedFromRow = prepareClaimedFromRow(db);
  /** Claims ids[i] under its fencing token: a negative (or missing) token never claims. */
  const claimOneFenced = (
    ids: string[],
    i: number,
    workerId: string,
    now: number,
    leaseMs: number,
    epochs: readonly number[],
    seq: number | undefined,
  ) => {
    const epoch = epochs[i] ?? -1;
    if (epoch < 0) return undefined;
    const r = ((seq !== undefined ? findFencedBySeq.get(seq, ids[i], now, epoch) : undefined) ?? findFenced.get(ids[i], now, epoch)) as
      ClaimRow | undefined;
    if (r) claimFenced.run(workerId, now, now + leaseMs, now, epoch, r[0]);
    return r;
  };
  /** Claims `id` (embedded mode: no fencing token, owner_epoch not read), by its rowid hint when given. */
  const claimOne = (id: string, seq: number | undefined, workerId: string, now: number, leaseMs: number) => {
    const r = ((seq !== undefined ? findBySeq.get(seq, id, now) : undefined) ?? find.get(id, now)) as ClaimRow | undefined;
    if (r) claim.run(workerId, now, now + leaseMs, now, r[0]);
    return r;
  };
  return (ids, workerId, now, leaseMs, epochs, seqs) => {
    const claimed: ClaimedTask[] = [];
    for (let i = 0; i < ids.length; i++) {
      const seq = seqs?.[i];
      const r =
        epochs === undefined ? claimOne(ids[i], seq, workerId, now, leaseMs) : claimOneFenced(ids, i, workerId, now, leaseMs, epochs, seq);
      if (r) claimed.push(claimedFromRow(r, now));
    }
    return claimed;
  };
}

/**
 * The worker's view of a claimed row (read before the claim's UPDATE, so attempts + 1), with a
 * workflow task's upstream results read on `db`. Shared by the claim ops.
 */
export function prepareClaimedFromRow(db: Database.Database): (r: ClaimRow, now: number) => ClaimedTask {
  const upstream = db.prepare(`
    SELECT u.workflow_task_id AS key, u.result AS result FROM workflow_edges e JOIN tasks u ON u.id = e.upstream_id
    WHERE e.downstream_id = ? ORDER BY u.seq`);
  // fromEntries defines own properties: a local id such as "__proto__" stays a plain key.
  const upstreamResultsOf = (id: string): Record<string, unknown> =>
    Object.fromEntries((upstream.all(id) as Array<{ key: string; result: string | null }>).map((u) => [u.key, parseJson(u.result)]));
  // Claimed tasks mostly share their retry settings: a row whose settings equal the previous
  // claimed row's (in this claim or an earlier one) gets the same frozen object, which a claim's
  // answer then carries to the dispatcher thread once (structured clone keeps shared references),
  // which makes posting a claim cheaper. With the writer on the caller's thread the object itself
  // is shared, hence frozen.
  let lastRetry: { columns: unknown[]; settings: RetrySettings } | null = null;
  const retryOf = (r: ClaimRow): RetrySettings => {
    const columns = r.slice(RETRY_AT);
    if (lastRetry && columns.every((v, i) => v === lastRetry?.columns[i])) return lastRetry.settings;
    const settings = Object.freeze(
      retryFromRow({
        max_retries: columns[0] as number,
        retry_backoff: columns[1] as string,
        retry_delay_seconds: columns[2] as number,
        max_retry_delay_seconds: columns[3] as number | null,
        retry_jitter: columns[4] as number | null,
        retry_base: columns[5] as number,
      }),
    );
    lastRetry = { columns, settings };
    return settings;
  };
  /** The worker's view of a claimed row (read before the UPDATE: attempts + 1). */
  const claimedFromRow = (r: ClaimRow, now: number): ClaimedTask => {
    const task: ClaimedTask = {
      id: r[1],
      seq: r[0],
      attempt: r[2] + 1,
      taskType: r[3],
      payload: parseJson(r[4]),
      timeoutSeconds: r[5],
      idempotencyKey: r[6],
      dueAt: r[7],
      retry: retryOf(r),
      partition: r[8],
      tenantId: r[9],
      startedAt: now,
    };
    if (r[11]) task.traceparent = r[11];
    if (r[12] !== null) task.lastCheckpoint = parseJson(r[12]);
    if (r[10]) task.upstreamResults = upstreamResultsOf(r[1]);
    return task;
  };
  return claimedFromRow;
}
