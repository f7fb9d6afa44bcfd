/**
 * claimTasks — inputs: ids, workerId, now, leaseMs, optional fencing epochs (one per id) and seq
 * hints (ignored here: the id's unique index is as cheap as a seq lookup in PostgreSQL).
 * Transition `claim`: PENDING → RUNNING with attempts + 1, worker_id, started_at = now,
 * lease_expires_at = now + leaseMs, cancel flag cleared; a SCHEDULED or RETRYING task already due
 * (due_at <= now) is claimed the same way (transitions `due` and `claim` in one write).
 * Output: ClaimedTask for each id whose compare-and-set won, in the order of `ids` (others are
 * skipped: cancelled, already claimed, not yet due, fenced). A workflow task also gets its
 * upstream tasks' results keyed by their workflow-local ids, and every task its `traceparent` and
 * the checkpoint an earlier attempt saved (`lastCheckpoint`).
 * Guarantee: one attempt number is handed out once, between nodes too: each chunk of up to
 * {@link CHUNK} ids is one `UPDATE … FROM unnest(…) … RETURNING` whose WHERE is the
 * compare-and-set (state, due_at and, with `epochs`, owner_epoch <= the id's token; a negative
 * token never claims), which PostgreSQL re-checks on the latest row version after waiting for a
 * concurrent writer of the row. Rows are locked in id order (ids sorted here, a nested loop over
 * them in array order, chunks one after the other), so overlapping batches do not deadlock.
 * Upstream results: one more statement, only when the batch has workflow tasks.
 */
import type { Db } from '../db';
import type { ClaimedTask, RetrySettings } from '../../../domain/task';
import { parseJson, RETRY_COLUMNS, retryFromRow, TaskRow } from '../../sql/row-mapping';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

/**
 * The compare-and-set of the claim, as one `(…) IS TRUE` test: no index answers it, so the planner
 * always finds the rows through the id index (a nested loop over the sorted ids: rows locked in id
 * order). Written as plain conditions, a table without fresh statistics (a queue that just filled)
 * made it scan every waiting task through the state indexes and hash-join them (10× slower).
 */
const claimable = (fence: string): string =>
  `((${sqlStates(TRANSITIONS.claim.from, 't.state')} OR (${sqlStates(TRANSITIONS.dueClaim.from, 't.state')} AND t.due_at <= $3))${fence}) IS TRUE`;

/**
 * Most ids per statement. Above about 180 ids on a table of 40,000 rows the planner prefers one
 * sequential scan and a hash join to that many probes of the id index (its cost model takes each
 * probe as random reads), which took 10 to 25 times longer with the table cached; chunks of 128
 * keep the probes. A batch of 500 is 4 statements.
 */
const CHUNK = 128;

const RETURNING = `RETURNING w.ord, t.seq, t.id, t.attempts, t.task_type, t.payload, t.timeout_seconds, t.idempotency_key, t.due_at,
  t.partition, t.tenant_id, t.workflow_id, t.traceparent, t.checkpoint, ${RETRY_COLUMNS.split(', ')
    .map((c) => `t.${c}`)
    .join(', ')}`;

const SET = `state = ${sqlState(TRANSITIONS.claim.to)}, attempts = t.attempts + 1, worker_id = $2, started_at = $3,
  lease_expires_at = $4, cancel_requested = 0, updated_at = $3`;

/** Embedded mode: owner_epoch is neither read nor written. */
const CLAIM = `
  UPDATE tasks t SET ${SET}
  FROM unnest($1::text[]) WITH ORDINALITY AS w(id, ord)
  WHERE t.id = w.id AND ${claimable('')}
  ${RETURNING}`;

/** Cluster mode: each id under its fencing token. */
const CLAIM_FENCED = `
  UPDATE tasks t SET ${SET}, owner_epoch = w.epoch
  FROM unnest($1::text[], $5::int8[]) WITH ORDINALITY AS w(id, epoch, ord)
  WHERE t.id = w.id AND w.epoch >= 0 AND ${claimable(' AND t.owner_epoch <= w.epoch')}
  ${RETURNING}`;

const UPSTREAM = `
  SELECT e.downstream_id AS id, u.workflow_task_id AS key, u.result AS result
  FROM workflow_edges e JOIN tasks u ON u.id = e.upstream_id
  WHERE e.downstream_id = ANY($1::text[])`;

type ClaimRow = Pick<
  TaskRow,
  | 'seq'
  | 'id'
  | 'attempts'
  | 'task_type'
  | 'payload'
  | 'timeout_seconds'
  | 'idempotency_key'
  | 'due_at'
  | 'partition'
  | 'tenant_id'
  | 'workflow_id'
  | 'traceparent'
  | 'checkpoint'
  | 'max_retries'
  | 'retry_backoff'
  | 'retry_delay_seconds'
  | 'max_retry_delay_seconds'
  | 'retry_jitter'
  | 'retry_base'
> & { ord: number };

/** Claims the claimable ones of `ids` for `workerId` (see the file header). */
export async function claimTasks(
  db: Db,
  ids: string[],
  workerId: string,
  now: number,
  leaseMs: number,
  epochs?: readonly number[],
  _seqs?: readonly number[],
): Promise<ClaimedTask[]> {
  if (ids.length === 0) return [];
  // Input positions in id order: chunks lock their rows in id order, one chunk after the other.
  const order = ids.map((_, i) => i).sort((a, b) => (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : a - b));
  const rows: ClaimRow[] = [];
  for (let from = 0; from < order.length; from += CHUNK) {
    const chunk = order.slice(from, from + CHUNK);
    const chunkIds = chunk.map((i) => ids[i]);
    const { rows: claimed } =
      epochs === undefined
        ? await db.query<ClaimRow>(CLAIM, [chunkIds, workerId, now, now + leaseMs])
        : await db.query<ClaimRow>(CLAIM_FENCED, [chunkIds, workerId, now, now + leaseMs, chunk.map((i) => epochs[i] ?? -1)]);
    for (const r of claimed) rows.push({ ...r, ord: chunk[r.ord - 1] });
  }
  rows.sort((a, b) => a.ord - b.ord);
  const upstream = await upstreamResults(
    db,
    rows.filter((r) => r.workflow_id),
  );
  // Claimed tasks mostly share their retry settings: equal settings share one frozen object.
  let last: { row: ClaimRow; settings: RetrySettings } | null = null;
  const retryOf = (r: ClaimRow): RetrySettings => {
    if (last && sameRetry(last.row, r)) return last.settings;
    last = { row: r, settings: Object.freeze(retryFromRow(r)) };
    return last.settings;
  };
  return rows.map((r) => {
    const task: ClaimedTask = {
      id: r.id,
      seq: r.seq,
      attempt: r.attempts,
      taskType: r.task_type,
      payload: parseJson(r.payload),
      timeoutSeconds: r.timeout_seconds,
      idempotencyKey: r.idempotency_key,
      dueAt: r.due_at,
      retry: retryOf(r),
      partition: r.partition,
      tenantId: r.tenant_id,
      startedAt: now,
    };
    if (r.traceparent) task.traceparent = r.traceparent;
    if (r.checkpoint !== null && r.checkpoint !== undefined) task.lastCheckpoint = parseJson(r.checkpoint);
    if (r.workflow_id) task.upstreamResults = upstream.get(r.id) ?? {};
    return task;
  });
}

/** True when both rows carry the same retry settings. */
function sameRetry(a: ClaimRow, b: ClaimRow): boolean {
  return (
    a.max_retries === b.max_retries &&
    a.retry_backoff === b.retry_backoff &&
    a.retry_delay_seconds === b.retry_delay_seconds &&
    a.max_retry_delay_seconds === b.max_retry_delay_seconds &&
    a.retry_jitter === b.retry_jitter &&
    a.retry_base === b.retry_base
  );
}

/** Downstream id → its upstream tasks' results keyed by workflow-local id (one statement). */
async function upstreamResults(db: Db, claimed: ClaimRow[]): Promise<Map<string, Record<string, unknown>>> {
  const byTask = new Map<string, Record<string, unknown>>();
  if (claimed.length === 0) return byTask;
  const { rows } = await db.query<{ id: string; key: string; result: string | null }>(UPSTREAM, [claimed.map((r) => r.id)]);
  for (const u of rows) {
    let results = byTask.get(u.id);
    if (!results) {
      results = {};
      byTask.set(u.id, results);
    }
    // defineProperty: a local id such as "__proto__" stays a plain key.
    Object.defineProperty(results, u.key, { value: parseJson(u.result), enumerable: true, writable: true, configurable: true });
  }
  return byTask;
}
